import Foundation
import PostgresNIO
import TestSupport
import Testing

@testable import CollectorPostgres

/// Collectors migrating one schema take turns; a collector on another schema of the same database
/// never waits for them (the tests migrate a hundred schemas at once, and so may a team).
@Suite("PostgreSQL migration lock", .enabled(if: PostgresTestServer.url != nil), .timeLimit(.minutes(5)))
struct PostgresMigrationLockTests {
  @Test("a held schema's migrations wait for its lock; another schema's lock is free")
  func oneLockPerSchema() async throws {
    let url = try #require(PostgresTestServer.url)
    let held = PostgresTestServer.uniqueSchema("lock")
    let holder = try PostgresEventStore(url: url, schema: held)
    try await holder.migrate()
    let sameSchema = try PostgresEventStore(url: url, schema: held)
    let otherSchema = try PostgresEventStore(url: url, schema: PostgresTestServer.uniqueSchema("lock"))
    let (release, released) = AsyncStream.makeStream(of: Void.self)
    let (locked, isLocked) = AsyncStream.makeStream(of: Void.self)
    let holding = Task {
      try await holder.client.withTransaction(logger: holder.logger) { connection in
        try await connection.query(PostgresQuery(unsafeSQL: holder.tables.migrationLock), logger: holder.logger)
        isLocked.yield()
        for await _ in release { break }
      }
    }
    for await _ in locked { break }
    let waiting = Task { try await sameSchema.migrate() }
    // Checked and released whatever the answers, so that a failure cannot hang the test.
    let waits = await Self.isWaitingOnTheLock(sameSchema, schema: held)
    let otherIsFree = try await otherSchema.client.withTransaction(logger: otherSchema.logger) { connection in
      let query = PostgresQuery(unsafeSQL: "SELECT pg_try_advisory_xact_lock(\(otherSchema.tables.migrationLockKey))")
      for try await free in try await connection.query(query, logger: otherSchema.logger).decode(Bool.self) {
        return free
      }
      return false
    }
    released.yield()
    try await holding.value
    try await waiting.value
    #expect(waits, "the second migration of \(held) did not wait for its lock")
    #expect(otherIsFree, "another schema's migration lock was taken")
    try await otherSchema.migrate()
    #expect(try await sameSchema.schemaVersion() == sameSchema.knownSchemaVersion)
    #expect(try await otherSchema.schemaVersion() == otherSchema.knownSchemaVersion)
    for store in [holder, sameSchema, otherSchema] { try await store.close() }
  }

  /// Whether a session of `store` waits on the advisory lock of `schema`'s migrations, asked of the
  /// server until it says so or two minutes have passed (the whole suite migrates its schemas at once).
  static func isWaitingOnTheLock(_ store: PostgresEventStore, schema: String) async -> Bool {
    let query = PostgresQuery(
      unsafeSQL: """
        SELECT count(*)::bigint FROM pg_locks
        WHERE locktype = 'advisory' AND NOT granted AND classid = 7358201 AND objsubid = 2
          AND objid::bigint = (hashtext('\(schema)')::bigint & 4294967295)
        """)
    for _ in 0..<1_200 {
      if let rows = try? await store.client.query(query, logger: store.logger).decode(Int64.self) {
        if let count = try? await rows.first(where: { _ in true }), count > 0 { return true }
      }
      try? await Task.sleep(for: .milliseconds(100))
    }
    return false
  }
}
