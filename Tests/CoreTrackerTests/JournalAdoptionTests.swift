import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

private func probe(_ index: Int) -> GenericEvent {
  GenericEvent("probe", parameters: ["i": .int(index)])
}

/// A run whose collector is down tracks `indices` into a journal in `source` (with `budget`), and
/// its journal is copied into `target` under `name`, as a dead run's.
private func deadRun(
  _ indices: Range<Int>, in source: URL, to target: URL, as name: String, budget: Int = 64 << 20
) async throws -> Int {
  let tracker = Tracker(
    services: [RoomService(capacity: 0)],
    configuration: journalingConfiguration(source, clock: ManualClock(), maximumBytes: budget))
  for index in indices { tracker.track(probe(index)) }
  await tracker.flush()
  let dropped = tracker.stats.dropped(.diskBudget)
  _ = try copyJournal(from: source, to: target, as: name)
  await tracker.shutdown()
  return dropped
}

/// Writes `run` into a journal's header as the run that took its records (the `absorbedBy` field:
/// 16 bytes at offset 88), as a run killed between taking them and deleting the file leaves it.
private func markAbsorbed(_ journal: URL, by run: UUID) throws {
  let handle = try FileHandle(forWritingTo: journal)
  defer { try? handle.close() }
  try handle.seek(toOffset: 88)
  try handle.write(contentsOf: withUnsafeBytes(of: run.uuid) { Data($0) })
}

@Suite("Dead runs' journals are adopted once, within the one budget")
struct JournalAdoptionTests {
  /// Three dead runs left journals that together hold more than the budget: the next run takes
  /// all of them, keeps within the budget by dropping the oldest records (each event counted as
  /// `disk_budget`), and leaves no journal behind; every event arrives or is counted, none both.
  @Test func deadRunsPastTheBudgetTogetherAreAdoptedWithinIt() async throws {
    let folder = JournalFolder()
    let budget = 64 << 10
    let runs = [0..<700, 1_000..<1_700, 2_000..<2_700]
    for (number, indices) in runs.enumerated() {
      let dropped = try await deadRun(
        indices, in: folder.folder("run\(number)"), to: folder.folder("next"), as: "journal-dead\(number).ctj",
        budget: budget)
      #expect(dropped == 0, "each dead run alone stays within the budget")
    }

    let service = RoomService()
    let next = Tracker(
      services: [service],
      configuration: journalingConfiguration(folder.folder("next"), clock: ManualClock(), maximumBytes: budget))
    await next.flush()
    let received = Set(service.indices)
    let counted = next.recordedDrops.filter { $0.reason == .diskBudget }.reduce(0) { $0 + $1.count }
    let total = runs.reduce(0) { $0 + $1.count }
    #expect(counted > 0, "the budget was never reached: the test proves nothing")
    #expect(received.count + counted == total)
    #expect(service.indices.count == received.count, "an event arrived twice")
    #expect(received.contains(2_699), "the newest were dropped instead of the oldest")
    let stats = next.stats
    #expect(stats.replayed == total && stats.dropped(.diskBudget) == counted)
    #expect(stats.tracked + stats.replayed + stats.generated == stats.routed + stats.totalDropped + stats.queued)
    let files = journalFiles(in: folder.folder("next"))
    #expect(files.count == 1)
    let size = try #require(try files.first?.resourceValues(forKeys: [.fileSizeKey]).fileSize)
    #expect(size <= budget)
    await next.shutdown()
  }

  /// A run killed while adopting a dead run's journal: before its own journal was in place (the
  /// dead one is adopted again, the abandoned `.making-` copy removed) or after (the dead one is
  /// deleted unread: its records are in the killer's journal). Either way each event comes once.
  @Test(arguments: [false, true])
  func aRunKilledWhileAdoptingLeavesEachRecordInOnePlace(ownJournalInPlace: Bool) async throws {
    let folder = JournalFolder()
    let target = folder.folder("next")
    let dead = 0..<50
    _ = try await deadRun(dead, in: folder.folder("dead"), to: target, as: "journal-dead.ctj")
    let killed = UUID()
    let killedName = "journal-\(killed.uuidString.lowercased()).ctj"
    _ = try copyJournal(from: target, to: target, as: ownJournalInPlace ? killedName : ".making-" + killedName)
    try markAbsorbed(target.appendingPathComponent("journal-dead.ctj"), by: killed)

    let service = RoomService()
    let next = Tracker(
      services: [service], configuration: journalingConfiguration(target, clock: ManualClock()))
    await next.flush()
    #expect(next.stats.replayed == dead.count)
    #expect(service.indices.sorted() == Array(dead))
    #expect(journalFiles(in: target).count == 1)
    let names = try FileManager.default.contentsOfDirectory(atPath: target.path)
    #expect(!names.contains { $0.hasPrefix(".making-") }, "\(names)")
    await next.shutdown()
  }
}
