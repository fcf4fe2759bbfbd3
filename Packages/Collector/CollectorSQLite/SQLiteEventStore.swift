public import CollectorStore
import Foundation
import GRDB

/// The embedded store: one SQLite file in WAL mode, through GRDB.
///
/// GRDB was chosen over sqlite-nio for its synchronous, prepared-statement API on one writer
/// connection (a group commit of thousands of rows is one transaction of cached statements, with no
/// event-loop hop per row), its migrator and its WAL reader pool. It links the system's SQLite
/// (`libsqlite3-dev` on Debian).
///
/// Durability: `synchronous=FULL` by default, so a committed write survives a power cut, not only a
/// killed process; ``Durability/normal`` trades that for speed (WAL still survives `kill -9`).
///
/// ```swift
/// let store = try SQLiteEventStore(path: "collector.sqlite")
/// try await store.migrate()
/// ```
public final class SQLiteEventStore: EventStore {
  /// How hard a commit waits for the disk.
  public enum Durability: String, Sendable, CaseIterable {
    /// fsync the WAL on every commit: durable across power loss.
    case full
    /// fsync at checkpoints only: durable across process crashes.
    case normal
  }

  let pool: DatabasePool
  /// The file's path.
  public let path: String

  /// Opens (creating when missing) the database file at `path`.
  public init(path: String, durability: Durability = .full) throws {
    self.path = path
    var configuration = Configuration()
    configuration.busyMode = .timeout(10)
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
      // Reports read tens of thousands of rows and sort and de-duplicate them: a 64 MB page cache,
      // the file mapped (no read() per page) and temporary b-trees in memory, per connection.
      try db.execute(sql: "PRAGMA cache_size = -65536; PRAGMA mmap_size = 1073741824; PRAGMA temp_store = MEMORY")
    }
    let directory = (path as NSString).deletingLastPathComponent
    if !directory.isEmpty {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    do {
      pool = try DatabasePool(path: path, configuration: configuration)
    } catch {
      throw StoreError.unavailable("cannot open \(path): \(error)")
    }
  }

  public func migrate() async throws {
    try await run { [pool] in
      let migrator = SQLiteSchema.migrator
      try pool.read { db in
        if try migrator.hasBeenSuperseded(db) {
          let found = try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") ?? 0
          throw StoreError.schemaTooNew(found: found, known: SQLiteSchema.versions)
        }
      }
      try migrator.migrate(pool)
      try pool.write { db in try SQLiteSchema.addContextColumns(db) }
    }
  }

  public var knownSchemaVersion: Int { SQLiteSchema.versions }

  public func schemaVersion() async throws -> Int {
    try await pool.read { db in try SQLiteSchema.migrator.appliedMigrations(db).count }
  }

  public func write(_ batch: StoreBatch) async throws -> WriteSummary {
    if batch.isEmpty { return WriteSummary() }
    return try await run { [pool] in try pool.write { db in try SQLiteRows.insert(batch, into: db) } }
  }

  public func ping() async throws {
    try await run { [pool] in _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") } }
  }

  public func eventCount(app: String?) async throws -> Int {
    try await run { [pool] in
      try pool.read { db in
        if let app {
          return try Int.fetchOne(db, sql: "SELECT count(*) FROM events WHERE app = ?", arguments: [app]) ?? 0
        }
        return try Int.fetchOne(db, sql: "SELECT count(*) FROM events") ?? 0
      }
    }
  }

  public func storedEventIDs(app: String, among ids: [String]) async throws -> Set<ExactText> {
    if ids.isEmpty { return [] }
    return try await run { [pool] in
      try pool.read { db in
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ",")
        return Set(
          try String.fetchAll(
            db, sql: "SELECT event_id FROM events WHERE app = ? AND event_id IN (\(marks))",
            arguments: StatementArguments([app] + ids)
          ).map { ExactText($0) })
      }
    }
  }

  public func events(app: String, limit: Int) async throws -> [StoredEvent] {
    try await run { [pool] in
      try pool.read { db in
        try Row.fetchAll(
          db, sql: "SELECT * FROM events WHERE app = ? ORDER BY occurred_at, event_id LIMIT ?",
          arguments: [app, limit]
        ).map(SQLiteRows.event)
      }
    }
  }

  public func counters(app: String) async throws -> [StoredCounter] {
    try await run { [pool] in
      try pool.read { db in
        try Row.fetchAll(
          db, sql: "SELECT * FROM counters WHERE app = ? ORDER BY first_counted_at, device_id, name",
          arguments: [app]
        ).map(SQLiteRows.counter)
      }
    }
  }

  public func prune(_ policy: PruneCutoffs) async throws -> Int {
    try await run { [pool] in
      try pool.write { db in
        var deleted = 0
        for (app, cutoff) in policy.perApp.sorted(by: { $0.key < $1.key }) {
          try db.execute(sql: "DELETE FROM events WHERE app = ? AND occurred_at < ?", arguments: [app, cutoff])
          deleted += db.changesCount
          try Self.refreshRollups(
            db, "app = ?1 AND hour <= ?2", "app = ?1 AND occurred_at >= ?2 AND occurred_at < ?2 + \(RollupTables.hour)",
            [app, RollupSQL.hour(of: cutoff)])
          try db.execute(sql: "DELETE FROM counters WHERE app = ? AND first_counted_at < ?", arguments: [app, cutoff])
          deleted += db.changesCount
        }
        if let cutoff = policy.defaultCutoff {
          let apps = policy.perApp.keys.sorted()
          let excluded = apps.isEmpty ? "" : " AND app NOT IN (\(databaseQuestionMarks(count: apps.count)))"
          var arguments: StatementArguments = [cutoff]
          arguments += StatementArguments(apps)
          try db.execute(sql: "DELETE FROM events WHERE occurred_at < ?\(excluded)", arguments: arguments)
          deleted += db.changesCount
          var hourArguments: StatementArguments = [RollupSQL.hour(of: cutoff)]
          hourArguments += StatementArguments(apps)
          try Self.refreshRollups(
            db, "hour <= ?\(excluded)", "occurred_at >= ?1 AND occurred_at < ?1 + \(RollupTables.hour)\(excluded)",
            hourArguments)
          try db.execute(sql: "DELETE FROM counters WHERE first_counted_at < ?\(excluded)", arguments: arguments)
          deleted += db.changesCount
        }
        return deleted
      }
    }
  }

  /// Makes the rollup rows matching `rollupCondition` match the events again: deletes them, then
  /// adds the events matching `eventCondition` (the same rows' events). Both conditions take
  /// `arguments`.
  static func refreshRollups(
    _ db: Database, _ rollupCondition: String, _ eventCondition: String, _ arguments: StatementArguments
  ) throws {
    let invalidated = SQLiteSchema.deviceSets.invalidate(hoursOf: "rollup_names", where: rollupCondition, hour: "hour")
    for sql in invalidated + SQLiteSchema.rollups.delete(where: rollupCondition) {
      try db.execute(sql: sql, arguments: arguments)
    }
    for sql in SQLiteSchema.rollups.add(from: "events", where: eventCondition) {
      try db.execute(sql: sql, arguments: arguments)
    }
  }

  /// Rebuilds every rollup from the stored events (after loading events some other way than
  /// ``write(_:)``, e.g. a bulk import); returns their rows.
  @discardableResult
  public func rebuildRollups() async throws -> Int {
    try await run { [pool] in
      try pool.write { db in
        // Hours without events before may have them now: every set is built again.
        for sql in SQLiteSchema.deviceSets.clear { try db.execute(sql: sql) }
        try Self.refreshRollups(db, "true", "true", [])
        try db.execute(sql: "DELETE FROM persons")
        try db.execute(sql: SQLiteSchema.persons.upsert(from: "events", where: "true", time: "occurred_at"))
        // Fresh statistics, so the planner knows the rebuilt tables' sizes.
        let tables = SQLiteSchema.rollups.tables.all
        try db.execute(sql: tables.map { "ANALYZE \($0)" }.joined(separator: "; "))
        return try Int.fetchOne(
          db, sql: "SELECT " + tables.map { "(SELECT count(*) FROM \($0))" }.joined(separator: " + "))
          ?? 0
      }
    }
  }

  /// Runs `sql` on the writer connection, outside any report (for tools that load data in bulk).
  public func execute(_ sql: String) async throws {
    try await run { [pool] in try pool.write { db in try db.execute(sql: sql) } }
  }

  public func saveKey(_ key: KeyRecord) async throws {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(
          sql: """
            INSERT INTO keys (id, app, scope, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (hash) DO NOTHING
            """,
          arguments: [key.id, key.app, key.scope.rawValue, key.hash, key.createdAt, key.revokedAt]
        )
      }
    }
  }

  public func key(hash: String) async throws -> KeyRecord? {
    try await run { [pool] in
      try pool.read { db in
        try Row.fetchOne(db, sql: "SELECT * FROM keys WHERE hash = ?", arguments: [hash]).flatMap(SQLiteRows.key)
      }
    }
  }

  public func keys() async throws -> [KeyRecord] {
    try await run { [pool] in
      try pool.read { db in
        try Row.fetchAll(db, sql: "SELECT * FROM keys ORDER BY created_at DESC, id").compactMap(SQLiteRows.key)
      }
    }
  }

  public func revokeKey(id: String, at time: Int64) async throws -> Bool {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(
          sql: "UPDATE keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?", arguments: [time, id]
        )
        return db.changesCount > 0
      }
    }
  }

  public func close() async throws {
    try await run { [pool] in try pool.close() }
  }

  /// Runs blocking database work off the cooperative pool, on ``SQLiteWorker/operations``, mapping
  /// SQLite failures to ``StoreError/unavailable(_:)``.
  func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await run(on: SQLiteWorker.operations, work)
  }

  /// Runs blocking database work on `threads`, mapping SQLite failures to
  /// ``StoreError/unavailable(_:)``.
  func run<T: Sendable>(on threads: BlockingThreads, _ work: @escaping @Sendable () throws -> T) async throws -> T {
    do {
      return try await threads.run(work)
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError.unavailable("\(error)")
    }
  }
}

/// Blocking SQLite calls run on threads of their own, never on Swift concurrency's fixed-size pool
/// nor on Dispatch's (one thread per core): reports read on ``reports``, so that however long they
/// take, writes, key look-ups and `/health` on ``operations`` are not queued behind them.
enum SQLiteWorker {
  /// Writes, key and session look-ups, health checks, maintenance.
  static let operations = BlockingThreads(name: "sqlite-operations", count: 4)
  /// Report queries.
  static let reports = BlockingThreads(name: "sqlite-reports", count: 2)
}

extension SQLiteEventStore: ReportQuerying, BulkLoading {
  public var personsTable: String? { SQLiteSchema.persons.persons }

  public var dialect: any SQLDialect { SQLiteDialect() }
  /// Whether reports name a parameter's number by the text the collector stored, as PostgreSQL and
  /// ClickHouse do: with SQLite 3.38 or later. An older SQLite names a non-integral number by its
  /// 15 significant digits (`0.30000000000000004` as `0.3`, one value with `0.3`).
  public static var namesNumbersAsStored: Bool { SQLiteDialect.readsJSONText }
  public var eventsTable: String { "events" }
  public var countersTable: String { "counters" }
  public var rollups: RollupTables? { SQLiteSchema.rollups.tables }
  public var deviceSets: DeviceSetTables? { SQLiteSchema.deviceSets.tables }

  /// Runs a report query on one of the WAL readers (reads never wait for the writer).
  public func read(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow] {
    try await run(on: SQLiteWorker.reports) { [pool] in
      try pool.read { db in try SQLiteRows.read(db, sql: sql, arguments: arguments) }
    }
  }

  /// Reads a funnel's step events on one of the WAL readers, straight into columns.
  public func readStepEvents(_ sql: String, _ arguments: [SQLValue]) async throws -> StepEventColumns {
    try await run(on: SQLiteWorker.reports) { [pool] in
      try pool.read { db in try SQLiteRows.readSteps(db, sql: sql, arguments: arguments) }
    }
  }
}
