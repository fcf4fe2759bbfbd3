import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

/// A service whose first `receive` blocks until released: the tracker's worker is held there, so
/// what was tracked meanwhile stays in the journal, uncommitted, as in a process about to die.
final class GateService: TrackerService, @unchecked Sendable {
  // @unchecked: the semaphores are thread-safe; `recorded` is behind its lock.
  let id: ServiceID
  let entered = DispatchSemaphore(value: 0)
  let release = DispatchSemaphore(value: 0)
  private let recorded = Locked<[TrackedEvent]>([])

  init(id: ServiceID = .collector) { self.id = id }

  func receive(_ event: TrackedEvent) {
    let first = recorded.withLock { events in
      events.append(event)
      return events.count == 1
    }
    if first {
      entered.signal()
      release.wait()
    }
  }

  var events: [TrackedEvent] { recorded.snapshot }
}

/// A folder of the test's own, removed at the end.
struct JournalFolder: ~Copyable {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("journal-test-\(UUID().uuidString)")
  func folder(_ name: String) -> URL { url.appendingPathComponent(name) }
  deinit { try? FileManager.default.removeItem(at: url) }
}

/// The journal files in `directory`.
func journalFiles(in directory: URL) -> [URL] {
  let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
  return names.filter { $0.hasSuffix(".ctj") }.sorted().map { directory.appendingPathComponent($0) }
}

/// Copies the live journal of `source` into `target` as a dead run's (nobody holds the copy).
func copyJournal(from source: URL, to target: URL, as name: String = "journal-dead.ctj") throws -> URL {
  let live = try #require(journalFiles(in: source).first)
  try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
  let copy = target.appendingPathComponent(name)
  try Data(contentsOf: live).write(to: copy)
  return copy
}

func journalingConfiguration(
  _ directory: URL, clock: ManualClock, sessionEvents: Bool = false, privacy: PrivacyStage = PrivacyStage(),
  maximumBytes: Int = 64 << 20
) -> TrackerConfiguration {
  TrackerConfiguration(
    context: TrackingContext(appName: "Test", appVersion: "1.0", platform: "iOS"), anonymousID: "anon-1",
    emitsSessionEvents: sessionEvents, privacy: privacy, clock: clock.function,
    journal: TrackerJournal(directory: directory, initialBytes: 4096, maximumBytes: maximumBytes))
}

/// A run whose worker is held in its first `receive` (after tracking `first`), so what it tracks
/// next stays uncommitted in its journal in `directory`, as in a process about to die.
struct HeldRun {
  let gate = GateService()
  let tracker: Tracker

  init(journal directory: URL, clock: ManualClock, first: String = "a") {
    tracker = Tracker(services: [gate], configuration: journalingConfiguration(directory, clock: clock))
    tracker.track(GenericEvent(first))
    gate.entered.wait()
  }

  /// Lets the worker go on and waits for it to hand everything over.
  func finish() async {
    gate.release.signal()
    await tracker.flush()
  }
}

@Suite("Crash journal")
struct JournalTests {
  @Test func aDeadRunsEventsAreReplayedWithTheirIDsShapesAndCommands() async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let gate = GateService(id: .firebase)
    let first = Tracker(services: [gate], configuration: journalingConfiguration(folder.folder("a"), clock: clock))
    first.track(ShopEvent.productViewed(id: "1"))
    gate.entered.wait()
    first.identify(userID: "u-7")
    first.track(ShopEvent.liked(momentID: "m-1", userID: "u-7"))
    clock.advance(by: 1)
    first.track(ShopEvent.productViewed(id: "2"))
    _ = try copyJournal(from: folder.folder("a"), to: folder.folder("b"))

    let firebase = RecordingService(id: .firebase)
    let second = Tracker(
      services: [firebase, RecordingService(id: .mixpanel)],
      configuration: journalingConfiguration(folder.folder("b"), clock: clock))
    await second.flush()
    gate.release.signal()
    await first.flush()

    #expect(second.stats.replayed == 3)
    #expect(second.stats.journalError == nil)
    #expect(firebase.names == ["product_viewed", "select_content", "product_viewed"])
    #expect(firebase.events.map(\.id) == gate.events.map(\.id))
    #expect(firebase.events.map(\.userID) == [nil, "u-7", "u-7"])
    #expect(firebase.events.map(\.timestamp) == gate.events.map(\.timestamp))
    #expect(firebase.events[1].parameters == gate.events[1].parameters)
    // The dead run's journal was adopted and removed; only the live one is left.
    #expect(journalFiles(in: folder.folder("b")).count == 1)
    let stats = second.stats
    #expect(stats.tracked + stats.replayed + stats.generated == stats.routed + stats.totalDropped + stats.queued)
  }

  @Test(arguments: [PrivacyStage.Action.drop, .hash(salt: "pepper")])
  func personalValuesNeverReachTheFileAndAreScrubbedOnce(action: PrivacyStage.Action) async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let privacy = PrivacyStage(personalKeys: ["phone"], action: action)
    let gate = GateService()
    let first = Tracker(
      services: [gate], configuration: journalingConfiguration(folder.folder("a"), clock: clock, privacy: privacy))
    first.track(ShopEvent.productViewed(id: "0"))
    gate.entered.wait()
    var parameters: EventParameters = [
      "phone": "+90-555-SECRET-1", "buyer": ["phone": "+90-555-SECRET-2", "tier": "gold"],
    ]
    parameters.append(personal: "email", "SECRET-3@example.com")
    first.track(ShopEvent.named("checkout", parameters))
    first.setUserProperty("+90-555-SECRET-4", forKey: "phone")

    let bytes = try Data(contentsOf: try #require(journalFiles(in: folder.folder("a")).first))
    #expect(bytes.range(of: Data("SECRET".utf8)) == nil)
    #expect(bytes.range(of: Data("gold".utf8)) != nil)

    _ = try copyJournal(from: folder.folder("a"), to: folder.folder("b"))
    let replay = RecordingService(id: .collector)
    let second = Tracker(
      services: [replay], configuration: journalingConfiguration(folder.folder("b"), clock: clock, privacy: privacy))
    await second.flush()
    gate.release.signal()
    await first.flush()
    // The replayed event carries exactly what the live run delivered: hashed once, not twice.
    #expect(replay.events.map(\.parameters) == gate.events.map(\.parameters))
    #expect(replay.events.last?.parameters.keys.contains("buyer") == true)
  }

  @Test func theSessionContinuesAcrossRunsWithinTheTimeout() async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let firstRun = RecordingService(id: .collector)
    let first = Tracker(
      services: [firstRun], configuration: journalingConfiguration(folder.url, clock: clock, sessionEvents: true))
    first.track(GenericEvent("a"))
    await first.shutdown()

    clock.advance(by: 10 * 60)
    let secondRun = RecordingService(id: .collector)
    let second = Tracker(
      services: [secondRun], configuration: journalingConfiguration(folder.url, clock: clock, sessionEvents: true))
    second.track(GenericEvent("b"))
    clock.advance(by: 31 * 60)
    second.track(GenericEvent("c"))
    await second.flush()

    #expect(firstRun.names == ["session_start", "a"])
    #expect(secondRun.names == ["b", "session_end", "session_start", "c"])
    #expect(secondRun.events[0].session == firstRun.events[1].session)
    #expect(secondRun.events[1].parameters["duration_ms"] == .int(10 * 60 * 1000))
    #expect(secondRun.events[3].session?.number == 2)
  }

  @Test func aLiveRunsJournalIsNotAdoptedByAnotherProcessSharingTheFolder() async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let gate = GateService()
    let first = Tracker(services: [gate], configuration: journalingConfiguration(folder.url, clock: clock))
    first.track(GenericEvent("a"))
    gate.entered.wait()
    first.track(GenericEvent("b"))

    let other = RecordingService(id: .collector)
    let second = Tracker(services: [other], configuration: journalingConfiguration(folder.url, clock: clock))
    await second.flush()
    #expect(second.stats.replayed == 0)
    #expect(journalFiles(in: folder.url).count == 2)
    gate.release.signal()
    await first.flush()
    #expect(gate.events.map(\.name) == ["a", "b"])
  }

  @Test func anEventLargerThanTheWholeJournalIsTrackedUnjournaledAndCounted() async throws {
    let folder = JournalFolder()
    let service = RecordingService(id: .collector)
    let tracker = Tracker(
      services: [service], configuration: journalingConfiguration(folder.url, clock: ManualClock(), maximumBytes: 4096))
    tracker.track(GenericEvent("small"))
    tracker.track(GenericEvent("large", parameters: ["text": .string(String(repeating: "x", count: 5_000))]))
    tracker.track(GenericEvent("after"))
    await tracker.flush()
    #expect(tracker.stats.unjournaled == 1)
    #expect(service.names == ["small", "large", "after"])
  }

  enum Damage: String, CaseIterable {
    case randomBytes, truncatedRecord, hugeRecordLength, unknownRecordType, unknownValueTag, emptyFile, headBeyondFile
  }

  @Test(arguments: Damage.allCases)
  func aDamagedJournalIsSkippedAndReportedWithoutACrash(damage: Damage) async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let first = HeldRun(journal: folder.folder("a"), clock: clock)
    first.tracker.track(GenericEvent("b", parameters: ["text": "hello"]))
    let copy = try copyJournal(from: folder.folder("a"), to: folder.folder("b"))
    await first.finish()

    var bytes = [UInt8](try Data(contentsOf: copy))
    let head = Int(bytes[8]) | Int(bytes[9]) << 8
    let records = 4096  // records start after the header and its drop ledger
    switch damage {
    case .randomBytes: bytes = (0..<2000).map { _ in UInt8.random(in: 0...255) }
    case .truncatedRecord: bytes = Array(bytes[0..<(head - 3)])
    case .hugeRecordLength: bytes.replaceSubrange(records..<records + 4, with: [0xff, 0xff, 0xff, 0x7f])
    case .unknownRecordType: bytes[records + 4] = 0xee
    case .unknownValueTag: bytes[head - 14] = 0xee  // the tag of "hello", the last value (then 5 + 4 + 4 bytes)
    case .emptyFile: bytes = []
    case .headBeyondFile: bytes.replaceSubrange(8..<16, with: [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])
    }
    try Data(bytes).write(to: copy)

    let replay = RecordingService(id: .collector)
    let second = Tracker(services: [replay], configuration: journalingConfiguration(folder.folder("b"), clock: clock))
    second.track(GenericEvent("after"))
    await second.flush()
    #expect(replay.names.last == "after")
    #expect(replay.names.allSatisfy { ["a", "b", "after"].contains($0) })
    if damage != .emptyFile { #expect(second.stats.journalError != nil) }
    #expect(journalFiles(in: folder.folder("b")).count == 1)
  }

  @Test func aJournalThatCannotBeOpenedLeavesTheTrackerWorking() async throws {
    let folder = JournalFolder()
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    let file = folder.folder("not-a-folder")
    try Data("x".utf8).write(to: file)
    let recording = RecordingService(id: .collector)
    let tracker = Tracker(services: [recording], configuration: journalingConfiguration(file, clock: ManualClock()))
    tracker.track(GenericEvent("a"))
    await tracker.flush()
    #expect(recording.names == ["a"])
    #expect(tracker.stats.journalError != nil)
  }
}

@Suite("Anonymous id shared by processes")
struct AnonymousIDTests {
  @Test func startsAtOnceAllGetTheOneIdentifierThatWon() async throws {
    let folder = JournalFolder()
    let url = folder.url
    let ids = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<16 { group.addTask { try AnonymousID.loadOrCreate(in: url) } }
      return try await group.reduce(into: Set<String>()) { $0.insert($1) }
    }
    #expect(ids.count == 1)
    #expect(try AnonymousID.loadOrCreate(in: folder.url) == ids.first)
  }

  @Test(arguments: ["", "\n\n", String(repeating: "x", count: 300)])
  func aDamagedFileIsReplaced(contents: String) throws {
    let folder = JournalFolder()
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    try Data(contents.utf8).write(to: folder.url.appendingPathComponent("anonymous-id"))
    let id = try AnonymousID.loadOrCreate(in: folder.url)
    #expect(id.count == 36)
    #expect(try AnonymousID.loadOrCreate(in: folder.url) == id)
  }
}
