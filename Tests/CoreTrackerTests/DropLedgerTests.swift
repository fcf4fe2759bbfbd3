import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

/// A service that keeps the drop reports it is handed; the first `receive` of a report can be held
/// (as a process killed right there would be).
final class ReportService: TrackerService, @unchecked Sendable {
  // @unchecked: the semaphores are thread-safe; `reports` is behind its lock.
  let id: ServiceID
  let holdsFirstReport: Bool
  let entered = DispatchSemaphore(value: 0)
  let release = DispatchSemaphore(value: 0)
  private let received = Locked<[DropReport]>([])

  init(id: ServiceID = .collector, holdsFirstReport: Bool = false) {
    self.id = id
    self.holdsFirstReport = holdsFirstReport
  }

  func receive(_ event: TrackedEvent) {}

  func receive(_ report: DropReport) {
    let first = received.withLock { reports in
      reports.append(report)
      return reports.count == 1
    }
    if first && holdsFirstReport {
      entered.signal()
      release.wait()
    }
  }

  var reports: [DropReport] { received.snapshot }
}

private func noisy(_ directory: URL, _ service: ReportService, clock: ManualClock) -> Tracker {
  var configuration = journalingConfiguration(directory, clock: clock)
  configuration.sampling = SamplingStage(rates: ["noise": 0])
  return Tracker(services: [service], configuration: configuration)
}

@Suite("Durable drop record")
struct DropLedgerTests {
  @Test func eachReportHoldsWhatWasNotReportedBeforeUnderANewID() async {
    let folder = JournalFolder()
    let service = ReportService()
    let tracker = noisy(folder.url, service, clock: ManualClock())
    for _ in 0..<5 { tracker.track(GenericEvent("noise")) }
    await tracker.flush()
    for _ in 0..<3 { tracker.track(GenericEvent("noise")) }
    await tracker.flush()
    await tracker.flush()  // nothing new: no report

    #expect(service.reports.map { $0.entries.map(\.count) } == [[5], [3]])
    #expect(Set(service.reports.map(\.id)).count == 2)
    #expect(service.reports.first?.entries.first?.reason == .sampledOut)
    #expect(tracker.recordedDrops == [DropReport.Entry(service: nil, reason: .sampledOut, count: 8)])
  }

  /// A run that dies with drops recorded but not reported: the next run on the folder reports them.
  @Test func aDeadRunsUnreportedDropsAreReportedByTheNextRun() async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let first = ReportService()
    let dead = noisy(folder.folder("a"), first, clock: clock)
    for _ in 0..<4 { dead.track(GenericEvent("noise")) }
    await dead.flush()  // reported: 4
    for _ in 0..<2 { dead.track(GenericEvent("noise")) }
    // Recorded, not reported: no flush, and the report interval has not passed on the test's clock.
    #expect(await eventually { dead.recordedDrops.first?.count == 6 })
    _ = try copyJournal(from: folder.folder("a"), to: folder.folder("b"))

    let second = ReportService()
    let next = noisy(folder.folder("b"), second, clock: clock)
    await next.flush()
    #expect(first.reports.map { $0.entries.map(\.count) } == [[4]])
    #expect(second.reports.map { $0.entries.map(\.count) } == [[2]])
    #expect(next.recordedDrops.map(\.count) == [2])
  }

  /// Killed right after a batch's drops were counted (here: copied the moment the worker tells of
  /// them): the events that caused them were committed in the same step, so the next run neither
  /// handles them again nor counts them twice.
  @Test func dropsAreCountedInTheStepThatCommitsTheirEvents() async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let (source, target) = (folder.folder("a"), folder.folder("b"))
    let copied = Locked(false)
    var configuration = journalingConfiguration(source, clock: clock)
    configuration.sampling = SamplingStage(rates: ["noise": 0])
    configuration.debug = DebugLog { line in
      guard line.hasPrefix("[CoreTracker] tracker: dropped 1 "), !copied.snapshot else { return }
      copied.withLock { $0 = (try? copyJournal(from: source, to: target)) != nil }
    }
    let dead = Tracker(services: [ReportService()], configuration: configuration)
    dead.track(GenericEvent("noise"))
    await dead.flush()
    #expect(copied.snapshot)

    let second = ReportService()
    let next = noisy(target, second, clock: clock)
    await next.flush()
    #expect(next.stats.replayed == 0)
    #expect(second.reports.map { $0.entries.map(\.count) } == [[1]])
  }

  /// Killed while handing a report over: the next run hands the same report again, under the same
  /// id (the collector keeps one), and nothing twice under another.
  @Test func aReportCutShortByACrashIsHandedAgainUnderItsID() async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let holding = ReportService(holdsFirstReport: true)
    let dead = noisy(folder.folder("a"), holding, clock: clock)
    for _ in 0..<3 { dead.track(GenericEvent("noise")) }
    let flushing = Task { await dead.flush() }
    holding.entered.wait()
    _ = try copyJournal(from: folder.folder("a"), to: folder.folder("b"))
    holding.release.signal()
    await flushing.value

    let second = ReportService()
    let next = noisy(folder.folder("b"), second, clock: clock)
    await next.flush()
    let original = try #require(holding.reports.first)
    #expect(second.reports.map(\.id) == [original.id])
    #expect(second.reports.first?.entries == original.entries)
  }
}
