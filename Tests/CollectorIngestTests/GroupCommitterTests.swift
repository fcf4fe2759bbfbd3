import CollectorRuntime
import CollectorSQLite
import CollectorStore
import CollectorWire
import Foundation
import Synchronization
import TestSupport
import Testing

/// A SQLite store that asks for gathered writes and records the size of each write it is given.
final class GatheringStore: ForwardingEventStore {
  let base: any EventStore
  let commitGathering: CommitGathering
  let writes = Mutex<[Int]>([])

  init(_ base: SQLiteEventStore, gathering: CommitGathering) {
    self.base = base
    commitGathering = gathering
  }

  var maximumConcurrentWrites: Int { 4 }
  func write(_ batch: StoreBatch) async throws -> WriteSummary {
    writes.withLock { $0.append(batch.events.count) }
    return try await base.write(batch)
  }
}

/// The group committer gathers rows for stores that want large writes (ClickHouse), and writes at
/// once for the others.
@Suite("Group commit")
struct GroupCommitterTests {
  /// `count` batches of `size` events each, ids unique across batches.
  static func batches(_ count: Int, of size: Int) -> [StoreBatch] {
    (0..<count).map { batch in
      var rows = StoreBatch()
      rows.events = (0..<size).map { index in
        StoredEvent(
          app: "ty", eventID: "e-\(batch)-\(index)", name: "product_viewed", kind: "action",
          occurredAt: 1_700_000_000_000, utcOffsetMinutes: 0, receivedAt: 1_700_000_000_500, deviceID: "device-1",
          userID: nil, sessionID: nil,
          context: EventContext([
            .appName: "Trendyol", .appVersion: "7.12.0", .appBuild: "712", .osName: "iOS", .osVersion: "17.4",
            .platform: "ios", .deviceModel: "iPhone15,2", .locale: "tr_TR", .libraryName: "CoreTracker/1.0.0",
          ]),
          parametersJSON: "{}")
      }
      return rows
    }
  }

  /// A migrated store in `directory` that gathers as `gathering` says, and a committer in front of it.
  static func committer(_ gathering: CommitGathering, in directory: URL) async throws -> (
    GatheringStore, GroupCommitter
  ) {
    let store = try Self.store(gathering, in: directory)
    try await store.migrate()
    return (store, GroupCommitter(store: store))
  }

  static func store(_ gathering: CommitGathering, in directory: URL) throws -> GatheringStore {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return GatheringStore(
      try SQLiteEventStore(path: directory.appendingPathComponent("c.sqlite").path), gathering: gathering)
  }

  @Test("ten requests of 100 rows become one write when the store gathers 1,000")
  func requestsAreGatheredIntoOneWrite() async throws {
    let directory = TemporaryDirectory()
    do {
      // A wait and a quiet time no test reaches: only the row count can release the write.
      let (store, committer) = try await Self.committer(
        CommitGathering(rows: 1_000, wait: .seconds(600), quiet: .seconds(600)), in: directory.url)
      try await withThrowingTaskGroup(of: Void.self) { group in
        for batch in Self.batches(10, of: 100) { group.addTask { try await committer.commit(batch) } }
        try await group.waitForAll()
      }
      #expect(store.writes.withLock { $0 } == [1_000])
      #expect(try await store.eventCount(app: nil) == 1_000)
    }
  }

  @Test("a lone request is written once its wait is over", arguments: [0, 1, 2])
  func aLoneRequestIsWrittenAfterTheWait(extraBatches: Int) async throws {
    let directory = TemporaryDirectory()
    do {
      let (store, committer) = try await Self.committer(
        CommitGathering(rows: 1_000, wait: .milliseconds(50), quiet: .seconds(600)), in: directory.url)
      for batch in Self.batches(1 + extraBatches, of: 10) { try await committer.commit(batch) }
      #expect(store.writes.withLock { $0 } == Array(repeating: 10, count: 1 + extraBatches))
    }
  }

  /// Clients that send their next batch only after an answer are all waiting: after the quiet time
  /// their rows are written, long before the gathering's wait (which no test reaches).
  @Test("requests stop coming: the gathered rows are written after the quiet time", .timeLimit(.minutes(1)))
  func aQuietCommitterWritesWhatItHas() async throws {
    let directory = TemporaryDirectory()
    do {
      let (store, committer) = try await Self.committer(
        CommitGathering(rows: 1_000, wait: .seconds(600), quiet: .milliseconds(50)), in: directory.url)
      for batch in Self.batches(3, of: 100) { try await committer.commit(batch) }
      #expect(store.writes.withLock { $0 } == [100, 100, 100])
    }
  }

  @Test("a store that writes immediately gets every request as soon as it comes")
  func immediateStoresAreNotHeldBack() async throws {
    let directory = TemporaryDirectory()
    do {
      let store = try Self.store(.immediately, in: directory.url)
      try await store.migrate()
      let committer = GroupCommitter(store: store)
      for batch in Self.batches(3, of: 5) { try await committer.commit(batch) }
      #expect(store.writes.withLock { $0 } == [5, 5, 5])
    }
  }
}
