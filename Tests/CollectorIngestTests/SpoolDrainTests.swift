import CollectorRuntime
import CollectorSQLite
import CollectorStore
import Foundation
import Synchronization
import TestSupport
import Testing

/// A store taking up to `writers` writes at once, each held `pause`, counting how many ran
/// together; its first write fails.
final class SlowConcurrentStore: ForwardingEventStore {
  let base: any EventStore
  let running = Mutex(0)
  let mostRunning = Mutex(0)
  let calls = Mutex(0)
  let pause: Duration
  let writers: Int

  init(_ base: any EventStore, writers: Int, pause: Duration) {
    self.base = base
    self.writers = writers
    self.pause = pause
  }

  var maximumConcurrentWrites: Int { writers }

  func write(_ batch: StoreBatch) async throws -> WriteSummary {
    let call = calls.withLock { calls in
      calls += 1
      return calls
    }
    let now = running.withLock { running in
      running += 1
      return running
    }
    mostRunning.withLock { $0 = max($0, now) }
    defer { running.withLock { $0 -= 1 } }
    try await Task.sleep(for: pause)
    if call == 1 { throw StoreError.unavailable("the first write fails (test)") }
    return try await base.write(batch)
  }
}

/// The spool's drain with a store that takes concurrent writes: two writes at once, a failed one
/// written again while the other goes on, and nothing forgotten before every older record is taken.
@Suite("Ingest spool: concurrent drain")
struct SpoolDrainTests {
  @Test(
    "two writes at once where the store takes them; a failed one retried; flush waits for all before it",
    arguments: [(4, 2), (2, 2), (1, 1)])
  func concurrentWrites(storeWriters: Int, together: Int) async throws {
    let directory = TemporaryDirectory()
    let sqlite = try SQLiteEventStore(path: directory.url.appendingPathComponent("events.sqlite").path)
    try await sqlite.migrate()
    let store = SlowConcurrentStore(sqlite, writers: storeWriters, pause: .milliseconds(100))
    let spool = try SpooledEventStore(
      directory: directory.url.appendingPathComponent("spool").path, base: store, rowsPerWrite: 300,
      retryDelay: .milliseconds(10), logger: SpoolTests.logger)
    // Ten records of 102 rows; at most two records (204 rows) a write. The first write fails while
    // the second goes on: the second's records are taken, and kept until the first's are too.
    for number in 0..<10 { _ = try await spool.write(SpoolTests.batch(number, size: 100)) }
    try await spool.flush()
    #expect(await spool.depth == 0)
    #expect(store.mostRunning.withLock { $0 } == together)
    #expect(try await sqlite.eventCount(app: "ty") == 1_000, "every row, the failed write's too")
    #expect(try await sqlite.counters(app: "ty").count == 10)
    // Five writes of two records at least, and the failed one again.
    #expect(store.calls.withLock { $0 } >= 6)
    try await spool.close()
  }
}
