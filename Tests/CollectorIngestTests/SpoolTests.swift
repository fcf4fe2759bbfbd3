import CollectorRuntime
import CollectorSQLite
import CollectorStore
import CollectorWire
import Foundation
import Logging
import Synchronization
import TestSupport
import Testing

/// A SQLite store that refuses writes while told to, and counts the writes it took.
final class RefusingStore: ForwardingEventStore {
  let base: any EventStore
  let refusing = Mutex(false)
  let refusals = Mutex(0)
  let writes = Mutex<[Int]>([])
  let gathering: CommitGathering

  init(_ base: SQLiteEventStore, gathering: CommitGathering = .immediately) {
    self.base = base
    self.gathering = gathering
  }

  var commitGathering: CommitGathering { gathering }

  func write(_ batch: StoreBatch) async throws -> WriteSummary {
    if refusing.withLock({ $0 }) {
      refusals.withLock { $0 += 1 }
      throw StoreError.unavailable("refused on purpose")
    }
    writes.withLock { $0.append(batch.events.count) }
    return try await base.write(batch)
  }
}

/// The ingest spool: a write returns once its rows are on the spool's disk, the store takes them
/// behind it, and nothing acknowledged is lost to a refusing store, a crash or a torn record.
@Suite("Ingest spool")
struct SpoolTests {
  static let logger = Logger(label: "spool-test")

  /// A migrated SQLite store in `directory`, behind a switch that can make it refuse.
  static func store(in directory: URL, gathering: CommitGathering = .immediately) async throws -> RefusingStore {
    let sqlite = try SQLiteEventStore(path: directory.appendingPathComponent("events.sqlite").path)
    try await sqlite.migrate()
    return RefusingStore(sqlite, gathering: gathering)
  }

  static func spool(_ path: String, _ store: any EventStore, maximumRows: Int = 500_000) throws -> SpooledEventStore {
    try SpooledEventStore(
      directory: path, base: store, maximumRows: maximumRows, retryDelay: .milliseconds(10), logger: logger)
  }

  /// Batch `number` of `size` events, with a counter, a quarantined entry and a submission on the
  /// first: every kind of row a batch holds.
  static func batch(_ number: Int, size: Int = 100) -> StoreBatch {
    var batch = GroupCommitterTests.batches(1, of: size)[0]
    batch.events = batch.events.enumerated().map { index, event in
      var event = event
      event.eventID = "b\(number)-e\(index)"
      event.userID = index.isMultiple(of: 2) ? "user-\(number)" : nil
      event.sessionID = index.isMultiple(of: 3) ? Int64(number) : nil
      event.parametersJSON = #"{"product_id":"p\#(index)","price":12.5,"title":"çay ☕"}"#
      event.context[.environment] = "internal"
      return event
    }
    batch.counters = [
      StoredCounter(
        app: "ty", counterID: "c\(number)", deviceID: "device-1", name: "launches", count: Int64(number + 1),
        firstCountedAt: 1_700_000_000_000, receivedAt: 1_700_000_000_500, context: batch.events[0].context)
    ]
    batch.submissions = [
      StoredSubmission(
        app: "ty", deviceID: "device-\(number)", receivedAt: 1_700_000_000_500,
        items: [.init(fingerprint: "f\(number)", id: "b\(number)-e0")], counters: [])
    ]
    return batch
  }

  @Test("rows written through the spool reach the store, every field intact, in large writes")
  func drains() async throws {
    let directory = TemporaryDirectory()
    // The store wants 500 rows a write and would wait an hour for them: no write can be made before
    // 500 rows wait, whatever the machine's pace.
    let store = try await Self.store(
      in: directory.url, gathering: CommitGathering(rows: 500, wait: .seconds(3_600), quiet: .zero))
    let spool = try Self.spool(directory.url.appendingPathComponent("spool").path, store)
    var sent: [StoredEvent] = []
    for half in 0..<2 {
      for number in half * 5..<half * 5 + 5 {
        let batch = Self.batch(number)
        sent += batch.events
        let summary = try await spool.write(batch)
        #expect(summary.insertedEvents == 100)
      }
      try await spool.flush()
    }
    #expect(await spool.depth == 0)
    let stored = try await store.events(app: "ty", limit: 10_000)
    #expect(Set(stored) == Set(sent), "every column of every event as written")
    #expect(try await store.counters(app: "ty").map { $0.count }.sorted() == Array(1...10).map(Int64.init))
    #expect(try await store.recentSubmissions(app: "ty", deviceID: "device-3", limit: 5).count == 1)
    // Five batches of 102 rows a write: the first four (408 rows) wait for the fifth.
    #expect(store.writes.withLock { $0 } == [500, 500])
    try await spool.close()
  }

  @Test("a refusing store loses nothing; past its bound the spool refuses and keeps nothing of it")
  func refusingStore() async throws {
    let directory = TemporaryDirectory()
    let store = try await Self.store(in: directory.url)
    store.refusing.withLock { $0 = true }
    let rows = Self.batch(0, size: 199).rowCount
    let spool = try Self.spool(directory.url.appendingPathComponent("spool").path, store, maximumRows: 5 * rows)
    for number in 0..<5 { _ = try await spool.write(Self.batch(number, size: 199)) }
    #expect(!spool.isFull, "at its bound, not past it")
    do {
      _ = try await spool.write(Self.batch(5, size: 199))
      Issue.record("a write past the spool's bound was taken")
    } catch GroupCommitter.CommitError.overloaded {}
    #expect(spool.isFull, "refused for room: full until the drain makes room")
    // What a request's answer depends on is read from the spool too.
    #expect(try await spool.storedEventIDs(app: "ty", among: ["b2-e7", "b5-e0", "nope"]) == ["b2-e7"])
    #expect(
      try await spool.recentSubmissions(app: "ty", deviceID: "device-4", limit: 3).map { $0.deviceID } == ["device-4"])
    let deadline = ContinuousClock.now + .seconds(30)
    while store.refusals.withLock({ $0 }) < 2 && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(store.refusals.withLock { $0 } >= 2, "the drain retried")
    #expect(try await store.eventCount(app: "ty") == 0)
    store.refusing.withLock { $0 = false }
    try await spool.flush()
    #expect(try await store.eventCount(app: "ty") == 5 * 199, "every acknowledged row, none of the refused batch")
    #expect(!spool.isFull)
    #expect(try await store.counters(app: "ty").count == 5)
    try await spool.close()
  }

  @Test(
    "a crash right after the acknowledgements: the next start writes every acknowledged row", arguments: [0, 1, 37])
  func crash(tornBytes: Int) async throws {
    let directory = TemporaryDirectory()
    let store = try await Self.store(in: directory.url)
    store.refusing.withLock { $0 = true }
    let path = directory.url.appendingPathComponent("spool").path
    let first = try Self.spool(path, store)
    for number in 0..<7 { _ = try await first.write(Self.batch(number)) }
    // The disk as a crash would leave it now: copied while the first spool still holds it, with a
    // record that was being written when the power went (never acknowledged) cut short.
    let copy = directory.url.appendingPathComponent("after-crash").path
    try FileManager.default.copyItem(atPath: path, toPath: copy)
    try FileManager.default.removeItem(atPath: copy + "/lock")
    if tornBytes > 0 {
      let segment = try FileManager.default.contentsOfDirectory(atPath: copy).first { $0.hasSuffix(".spool") }!
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: copy + "/" + segment))
      try handle.seekToEnd()
      try handle.write(contentsOf: Data(repeating: 0x2A, count: tornBytes))
      try handle.close()
    }
    let otherDirectory = TemporaryDirectory()
    let other = try await Self.store(in: otherDirectory.url)
    other.refusing.withLock { $0 = true }  // until the recovered rows are counted
    let second = try Self.spool(copy, other)
    #expect(await second.depth == 7 * 102, "7 batches of 100 events, a counter and a submission")
    other.refusing.withLock { $0 = false }
    try await second.flush()
    #expect(try await other.eventCount(app: "ty") == 700)
    #expect(
      Set(try await other.events(app: "ty", limit: 1_000).map { $0.eventID })
        == Set(
          (0..<7).flatMap { batch in
            (0..<100).map { "b\(batch)-e\($0)" }
          }))
    try await second.close()
    // Drained, its files are emptied: a third start has nothing to write.
    let third = try Self.spool(copy, other)
    #expect(await third.depth == 0)
    try await third.close()
    store.refusing.withLock { $0 = false }
    try await first.close()
  }

  @Test("a second spool on a directory in use is refused, and a stranger's file is not taken for a segment")
  func directoryInUse() async throws {
    let directory = TemporaryDirectory()
    let store = try await Self.store(in: directory.url)
    let path = directory.url.appendingPathComponent("spool").path
    let first = try Self.spool(path, store)
    #expect(throws: (any Error).self) { _ = try Self.spool(path, store) }
    try await first.close()
    try Data("not a spool".utf8).write(to: URL(fileURLWithPath: path + "/00000000000000000009.spool"))
    #expect(throws: (any Error).self) { _ = try Self.spool(path, store) }
  }

  @Test("erasure waits for the spooled rows, so none of the person's reach the store after it")
  func erasureWaits() async throws {
    let directory = TemporaryDirectory()
    let store = try await Self.store(
      in: directory.url, gathering: CommitGathering(rows: 100_000, wait: .seconds(2), quiet: .zero))
    let spool = try Self.spool(directory.url.appendingPathComponent("spool").path, store)
    _ = try await spool.write(Self.batch(0))
    let report = try await spool.erase(ErasureSubject(app: "ty", deviceID: "device-1", userID: nil)!)
    #expect(report.events == 100)
    try await spool.flush()
    #expect(try await store.eventCount(app: "ty") == 0)
    try await spool.close()
  }
}
