import CollectorStore
import Foundation
import PostgresNIO
import TestSupport
import Testing

@testable import CollectorPostgres

/// A device-set build and a change to the names rollup never interleave on PostgreSQL: a build
/// waits for a write in progress, and writes, erasure and pruning wait for a build in progress (else
/// a build could mark an hour from rows a write then changes, and reports would read a stale set).
@Suite("PostgreSQL device-set lock", .enabled(if: PostgresTestServer.url != nil), .timeLimit(.minutes(5)))
struct PostgresDeviceSetLockTests {
  /// What runs while the other side's lock is held.
  enum Action: String, CaseIterable, Sendable {
    case build, write, erase, prune
  }

  static let hour: Int64 = 3_600_000
  static let start: Int64 = 1_700_000_000_000 / hour * hour

  @Test("an action waits while the other side holds the names rollup", arguments: Action.allCases)
  func waitsForTheOtherSide(action: Action) async throws {
    let url = try #require(PostgresTestServer.url)
    let schema = PostgresTestServer.uniqueSchema("sets")
    let store = try PostgresEventStore(url: url, schema: schema)
    try await store.migrate()
    let events = (0..<6).map {
      Rows.event("e\($0)", at: Self.start + Int64($0) * Self.hour, device: "device-\($0 % 2)")
    }
    _ = try await store.write(StoreBatch(events: events))
    if action != .build { try await store.buildDeviceSets(before: .max) }
    // A build holds the lock a write takes, and a write the lock a build takes.
    let held = action == .build ? store.tables.namesWriteLock : store.tables.buildLock
    let (release, released) = AsyncStream.makeStream(of: Void.self)
    let (locked, isLocked) = AsyncStream.makeStream(of: Void.self)
    let holding = Task {
      try await store.client.withTransaction(logger: store.logger) { connection in
        try await connection.query(PostgresQuery(unsafeSQL: held), logger: store.logger)
        isLocked.yield()
        for await _ in release { break }
      }
    }
    for await _ in locked { break }
    let waiting = Task { try await Self.run(action, on: store) }
    // Checked and released whatever the answer, so that a failure cannot hang the test.
    let waits = await Self.isWaitingOnTheNamesRollup(store, schema: schema)
    released.yield()
    try await holding.value
    try await waiting.value
    #expect(waits, "\(action) did not wait for the lock on \(schema).rollup_names")
    try await store.execute("DROP SCHEMA \"\(schema)\" CASCADE")
    try await store.close()
  }

  static func run(_ action: Action, on store: PostgresEventStore) async throws {
    switch action {
    case .build: _ = try await store.buildDeviceSets(before: .max)
    case .write: _ = try await store.write(StoreBatch(events: [Rows.event("late", at: start + 30_000)]))
    case .erase: _ = try await store.erase(ErasureSubject(app: "ty", deviceID: "device-1", userID: nil)!)
    case .prune: _ = try await store.prune(PruneCutoffs(defaultCutoff: start + 2 * hour, perApp: [:]))
    }
  }

  /// Whether a session waits for a lock on `schema`'s names rollup, asked of the server until it
  /// says so or a minute has passed.
  static func isWaitingOnTheNamesRollup(_ store: PostgresEventStore, schema: String) async -> Bool {
    let query = PostgresQuery(
      unsafeSQL: """
        SELECT count(*)::bigint FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT l.granted AND c.relname = 'rollup_names' AND n.nspname = '\(schema)'
        """)
    for _ in 0..<600 {
      if let rows = try? await store.client.query(query, logger: store.logger).decode(Int64.self) {
        if let count = try? await rows.first(where: { _ in true }), count > 0 { return true }
      }
      try? await Task.sleep(for: .milliseconds(100))
    }
    return false
  }
}
