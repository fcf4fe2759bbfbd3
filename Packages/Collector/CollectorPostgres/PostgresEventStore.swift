public import CollectorStore
import Foundation
public import Logging
import PostgresNIO

/// The shared store: PostgreSQL through postgres-nio, for several collector instances on one
/// database.
///
/// Every instance may run ``migrate()`` at start: migrations take an advisory lock on the schema, so
/// only one applies them, and collectors on other schemas of the same database never wait for it.
/// Writes are one `INSERT … SELECT FROM unnest(…)` per table per transaction (one round trip for
/// thousands of rows), `ON CONFLICT DO NOTHING` on the de-duplication keys.
///
/// ```swift
/// let store = try PostgresEventStore(url: "postgres://collector:secret@127.0.0.1:5432/analytics")
/// try await store.migrate()
/// ```
public final class PostgresEventStore: EventStore {
  let client: PostgresClient
  private let runner: Task<Void, Never>
  let logger: Logger
  let tables: PostgresTables
  /// Group commits run on up to this many connections at once (half the pool, at least 1, at most 4):
  /// while one transaction waits for the server, the next is already on its way.
  public let maximumConcurrentWrites: Int

  /// Connects to the database that `url` names (`postgres://user:password@host:port/database`), in
  /// the schema `schema` (created when missing).
  public init(url: String, schema: String = "public", maximumConnections: Int = 8, logger: Logger? = nil) throws {
    let configuration = try PostgresURL.configuration(url)
    var clientConfiguration = configuration
    clientConfiguration.options.maximumConnections = maximumConnections
    guard PostgresTables.isValidSchema(schema) else {
      throw StoreError.unavailable("schema \"\(schema)\" is not a plain identifier ([a-z_][a-z0-9_]*)")
    }
    self.tables = PostgresTables(schema: schema)
    self.maximumConcurrentWrites = min(4, max(1, maximumConnections / 2))
    self.logger = logger ?? Logger(label: "collector.postgres")
    let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: self.logger)
    self.client = client
    self.runner = Task { await client.run() }
  }

  deinit { runner.cancel() }

  public func migrate() async throws {
    try await guarded {
      try await client.withTransaction(logger: logger) { connection in
        try await connection.query(PostgresQuery(unsafeSQL: tables.migrationLock), logger: logger)
        for statement in tables.bootstrap {
          try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        let applied = try await Self.version(connection, tables, logger)
        if applied > tables.migrations.count {
          throw StoreError.schemaTooNew(found: applied, known: tables.migrations.count)
        }
        for (index, migration) in tables.migrations.enumerated() where index >= applied {
          for statement in migration {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
          }
          try await connection.query(
            "INSERT INTO \(unescaped: tables.migrationsTable) (version) VALUES (\(index + 1))", logger: logger)
        }
        var present: Set<String> = []
        for try await name in try await connection.query(
          PostgresQuery(unsafeSQL: tables.presentContextColumns), logger: logger
        ).decode(String.self) {
          present.insert(name)
        }
        for statement in tables.addContextColumns(present: present) {
          try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
      }
    }
  }

  public var knownSchemaVersion: Int { tables.migrations.count }

  public func schemaVersion() async throws -> Int {
    try await guarded {
      try await client.withConnection { connection in try await Self.version(connection, tables, logger) }
    }
  }

  private static func version(_ connection: PostgresConnection, _ tables: PostgresTables, _ logger: Logger)
    async throws -> Int
  {
    let rows = try await connection.query(
      PostgresQuery(unsafeSQL: "SELECT coalesce(max(version), 0) FROM \(tables.migrationsTable)"), logger: logger
    )
    for try await version in rows.decode(Int.self) { return version }
    return 0
  }

  public func write(_ batch: StoreBatch) async throws -> WriteSummary {
    if batch.isEmpty { return WriteSummary() }
    return try await guarded {
      try await client.withTransaction(logger: logger) { connection in
        var summary = WriteSummary()
        if !batch.events.isEmpty {
          let inserted = try await Self.count(connection.query(tables.insertEvents(batch.events), logger: logger))
          summary.insertedEvents = inserted
          summary.duplicateEvents = batch.events.count - inserted
        }
        if !batch.counters.isEmpty {
          let unique = PostgresTables.largestPerID(batch.counters)
          let inserted =
            unique.isEmpty ? 0 : try await Self.count(connection.query(tables.insertCounters(unique), logger: logger))
          summary.insertedCounters = inserted
          summary.duplicateCounters = batch.counters.count - inserted
        }
        try await tables.insertQuarantine(batch, on: connection, logger: logger)
        try await tables.insertClientDrops(batch, on: connection, logger: logger)
        return summary
      }
    }
  }

  public func ping() async throws {
    try await guarded { _ = try await Self.count(client.query("SELECT 1", logger: logger)) }
  }

  public func eventCount(app: String?) async throws -> Int {
    try await guarded {
      var binds = PostgresBindings()
      var sql = "SELECT count(*)::bigint FROM \(tables.events)"
      if let app {
        binds.append(app)
        sql += " WHERE app = $1"
      }
      return try await Self.count(client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger))
    }
  }

  public func storedEventIDs(app: String, among ids: [String]) async throws -> Set<ExactText> {
    if ids.isEmpty { return [] }
    return try await guarded {
      let rows = try await client.query(
        "SELECT event_id FROM \(unescaped: tables.events) WHERE app = \(app) AND event_id = ANY(\(ids)::text[])",
        logger: logger)
      var found: Set<ExactText> = []
      for try await id in rows.decode(String.self) { found.insert(ExactText(id)) }
      return found
    }
  }

  public func events(app: String, limit: Int) async throws -> [StoredEvent] {
    // `e.`: the select list names the time in ms `occurred_at`; the order must use the column (and
    // its index), not sort every row by that expression.
    try await guarded {
      let rows = try await client.query(
        """
        SELECT \(unescaped: PostgresTables.eventColumns) FROM \(unescaped: tables.events) e WHERE app = \(app)
        ORDER BY e.occurred_at, e.event_id LIMIT \(limit)
        """,
        logger: logger)
      var events: [StoredEvent] = []
      for try await row in rows { events.append(try PostgresTables.event(row)) }
      return events
    }
  }

  public func counters(app: String) async throws -> [StoredCounter] {
    try await guarded {
      let rows = try await client.query(
        """
        SELECT \(unescaped: PostgresTables.counterColumns) FROM \(unescaped: tables.counters) c WHERE app = \(app)
        ORDER BY c.first_counted_at, c.device_id, c.name
        """,
        logger: logger)
      var counters: [StoredCounter] = []
      for try await row in rows { counters.append(try PostgresTables.counter(row)) }
      return counters
    }
  }

  public func prune(_ policy: PruneCutoffs) async throws -> Int {
    try await guarded {
      try await client.withTransaction(logger: logger) { connection in
        var deleted = 0
        for (app, cutoff) in policy.perApp.sorted(by: { $0.key < $1.key }) {
          var binds = PostgresBindings()
          binds.append(app)
          binds.append(cutoff)
          for (table, column) in [(tables.events, "occurred_at"), (tables.counters, "first_counted_at")] {
            deleted += try await Self.affected(
              connection,
              PostgresQuery(
                unsafeSQL: "DELETE FROM \(table) WHERE app = $1 AND \(column) < to_timestamp($2 / 1000.0)",
                binds: binds
              ),
              logger
            )
          }
          var hourBinds = PostgresBindings()
          hourBinds.append(app)
          hourBinds.append(RollupSQL.hour(of: cutoff))
          try await refreshRollups(
            connection, "app = $1 AND hour <= $2",
            "app = $1 AND occurred_at >= to_timestamp($2 / 1000.0) "
              + "AND occurred_at < to_timestamp(($2 + \(RollupTables.hour)) / 1000.0)", hourBinds)
        }
        if let cutoff = policy.defaultCutoff {
          var binds = PostgresBindings()
          binds.append(cutoff)
          binds.append(policy.perApp.keys.sorted())
          for (table, column) in [(tables.events, "occurred_at"), (tables.counters, "first_counted_at")] {
            deleted += try await Self.affected(
              connection,
              PostgresQuery(
                unsafeSQL: "DELETE FROM \(table) WHERE \(column) < to_timestamp($1 / 1000.0) "
                  + "AND NOT (app = ANY($2::text[]))",
                binds: binds
              ),
              logger
            )
          }
          var hourBinds = PostgresBindings()
          hourBinds.append(RollupSQL.hour(of: cutoff))
          hourBinds.append(policy.perApp.keys.sorted())
          try await refreshRollups(
            connection, "hour <= $1 AND NOT (app = ANY($2::text[]))",
            "occurred_at >= to_timestamp($1 / 1000.0) AND occurred_at < to_timestamp(($1 + \(RollupTables.hour)) / 1000.0) "
              + "AND NOT (app = ANY($2::text[]))", hourBinds)
        }
        return deleted
      }
    }
  }

  /// Makes the rollup rows matching `rollupCondition` match the events again: deletes them and the
  /// device sets of their hours, then adds the events matching `eventCondition` (the same rows'
  /// events). Both conditions take `binds`.
  private func refreshRollups(
    _ connection: PostgresConnection, _ rollupCondition: String, _ eventCondition: String, _ binds: PostgresBindings
  ) async throws {
    try await connection.query(PostgresQuery(unsafeSQL: tables.namesWriteLock), logger: logger)
    let invalidated = tables.deviceSets.invalidate(
      hoursOf: tables.rollups.tables.names, where: rollupCondition, hour: "hour")
    let statements =
      invalidated + tables.rollups.delete(where: rollupCondition)
      + tables.rollups.add(from: tables.events, where: eventCondition)
    for sql in statements { try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) }
  }

  func refreshRollups(
    _ connection: PostgresConnection, _ rollupCondition: String, _ eventCondition: String, _ values: [String]
  ) async throws {
    var binds = PostgresBindings()
    for value in values { binds.append(value) }
    try await refreshRollups(connection, rollupCondition, eventCondition, binds)
  }

  /// Rebuilds every rollup from the stored events (after loading events some other way than
  /// ``write(_:)``, e.g. a bulk import); returns their rows.
  @discardableResult
  public func rebuildRollups() async throws -> Int {
    try await guarded {
      try await client.withTransaction(logger: logger) { connection in
        // Hours without events before may have them now: every set is built again.
        try await connection.query(PostgresQuery(unsafeSQL: tables.namesWriteLock), logger: logger)
        for sql in tables.deviceSets.clear { try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
        try await refreshRollups(connection, "true", "true", PostgresBindings())
        for sql in ["DELETE FROM \(tables.persons.persons)", tables.rebuildPersons] {
          try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
        // Fresh statistics, so the planner knows the rebuilt tables' sizes.
        let all = tables.rollups.tables.all
        for table in all { try await connection.query(PostgresQuery(unsafeSQL: "ANALYZE \(table)"), logger: logger) }
        let count = "SELECT (" + all.map { "(SELECT count(*) FROM \($0))" }.joined(separator: " + ") + ")::bigint"
        return try await Self.count(connection.query(PostgresQuery(unsafeSQL: count), logger: logger))
      }
    }
  }

  /// Runs `sql` outside any report, for tools that load data in bulk (benchmarks, imports); never
  /// pass it SQL from a client.
  public func execute(_ sql: String) async throws {
    try await guarded {
      for try await _ in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger) {}
    }
  }

  public func close() async throws {
    runner.cancel()
    await runner.value
  }

  // MARK: Helpers

  static func count(_ rows: PostgresRowSequence) async throws -> Int {
    var result = 0
    for try await value in rows.decode(Int.self) { result = value }
    return result
  }

  static func deleted(
    _ connection: PostgresConnection, _ sql: String, _ values: [String], _ logger: Logger
  ) async throws -> Int {
    var binds = PostgresBindings()
    for value in values { binds.append(value) }
    return try await affected(connection, PostgresQuery(unsafeSQL: sql, binds: binds), logger)
  }

  static func affected(_ connection: PostgresConnection, _ query: PostgresQuery, _ logger: Logger)
    async throws -> Int
  {
    let wrapped = PostgresQuery(
      unsafeSQL: "WITH changed AS (\(query.sql) RETURNING 1) SELECT count(*)::bigint FROM changed", binds: query.binds
    )
    return try await count(connection.query(wrapped, logger: logger))
  }

  /// Maps every failure but the store's own to ``StoreError/unavailable(_:)``.
  func guarded<T>(_ work: () async throws -> T) async throws -> T {
    do {
      return try await work()
    } catch let error as StoreError {
      throw error
    } catch let error as PSQLError {
      throw StoreError.unavailable(String(reflecting: error))
    } catch {
      throw StoreError.unavailable("\(error)")
    }
  }
}

extension PostgresEventStore: ReportQuerying, BulkLoading {
  public var dialect: any SQLDialect { PostgresDialect() }
  public var eventsTable: String { tables.events }
  public var countersTable: String { tables.counters }
  public var rollups: RollupTables? { tables.rollups.tables }
  public var personsTable: String? { tables.persons.persons }

  public func read(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow] {
    try await guarded {
      let rows = try await client.query(
        PostgresQuery(unsafeSQL: sql, binds: Self.bindings(arguments)), logger: logger)
      var result: [SQLRow] = []
      var columns: [String]?
      for try await row in rows {
        let names = columns ?? row.map(\.columnName)
        columns = names
        result.append(SQLRow(columns: names, values: row.map(Self.value)))
      }
      return result
    }
  }

  static func value(_ cell: PostgresCell) -> SQLValue {
    guard cell.bytes != nil else { return .null }
    switch cell.dataType {
    case .int2, .int4, .int8: return (try? cell.decode(Int64.self)).map(SQLValue.int) ?? .null
    case .float4, .float8: return (try? cell.decode(Double.self)).map(SQLValue.double) ?? .null
    case .bool: return (try? cell.decode(Bool.self)).map { .int($0 ? 1 : 0) } ?? .null
    default: return (try? cell.decode(String.self)).map(SQLValue.text) ?? .null
    }
  }
}
