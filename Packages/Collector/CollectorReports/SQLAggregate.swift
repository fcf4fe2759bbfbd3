public import CollectorStore

/// ``ReportQuery`` in the SQL engines' dialects: one parameterised statement over the events (or
/// the rollups, when they can answer it) or the counters; or the device sets and the parameter
/// cache, where the store keeps them (``aggregateFromDeviceSets(_:)``,
/// ``aggregateFromParameterCache(_:)``).
extension SQLReports {
  /// The rows of `query`: one per group, the dimensions in `d0`, `d1`, …, each measure in its
  /// ``ReportQuery/Measure/column``.
  public func aggregate(_ query: ReportQuery) async throws -> [SQLRow] {
    if let answered = try await aggregateFromDeviceSets(query) { return answered }
    if let answered = try await aggregateFromParameterCache(query) { return answered }
    var sql = SQLBuilder(store.dialect)
    let rollup = rollupTable(for: query)
    let byKey = try await readsByKey(query)
    // The names rollup read by hour, the name is written `+name`: no index then serves the
    // grouping or the name's condition, and the planner takes the hour range's.
    let name = query.rollup == .names && byKey == false ? "+name" : "name"
    let dimensions = query.dimensions.map { expression($0, of: query, rollup: rollup != nil, name: name, &sql) }
    let measures = query.measures.map { expression($0, rollup: rollup != nil, sql) }
    var conditions: String
    let table: String
    switch (query.source, rollup) {
    case (.events, let rollup?):
      (table, conditions) = (rollup, sql.rollupConditions(query.filter, byKey: byKey == true))
    case (.events, nil):
      (table, conditions) = (store.eventsTable, sql.conditions(query.filter))
    case (.counters, _):
      (table, conditions) = (store.countersTable, sql.conditions(query.filter, timeColumn: query.timeColumn))
    }
    if let event = query.name { conditions += " AND \(name) = \(sql.bind(event))" }
    // A parameter's value is read from each whole row: the rows in the table's order.
    if query.source == .events, rollup == nil,
      query.dimensions.contains(where: { if case .parameter = $0 { true } else { false } })
    {
      conditions = store.dialect.inTableOrder(table, where: conditions)
    }
    let limit = query.limit.map { sql.bind(Int64($0)) }
    if store.dialect.countsDistinctByGrouping, query.source == .events, let keys = distinctKeys(query, rollup: rollup) {
      return try await rows(
        grouped(
          query, by: keys, dimensions: dimensions, from: table, where: conditions, rollup: rollup != nil, limit: limit),
        sql)
    }
    let statement = query.statement(
      dimensions: dimensions, measures: measures, from: table, where: conditions, limit: limit)
    return try await rows(statement, sql)
  }

  /// What `query`'s distinct count is of, where ``grouped(_:by:dimensions:from:where:rollup:limit:)``
  /// answers it: the device (events and devices), or the device and session (events and sessions,
  /// on the sessions rollup `rollup`); `nil` for any other set of measures.
  private func distinctKeys(_ query: ReportQuery, rollup: String?) -> [String]? {
    let measured = Set(query.measures)
    if measured.contains(.devices), measured.isSubset(of: [.events, .devices]) { return ["device_id"] }
    if rollup != nil, query.rollup == .sessions, measured.contains(.sessions),
      measured.isSubset(of: [.events, .sessions])
    {
      return ["device_id", "session_key"]
    }
    return nil
  }

  /// `query` grouped by its dimensions and `keys` first, its groups then counted: the same rows as
  /// `count(DISTINCT)` of the devices (`keys`: the device) or of the rollup's sessions (the device
  /// and the session: no key text built per row, and PostgreSQL's index by device and session
  /// serves the grouping), where the dialect counts so (``SQLDialect/countsDistinctByGrouping``;
  /// Docs/Benchmarks.md). A group of the session key `''` is no session.
  private func grouped(
    _ query: ReportQuery, by keys: [String], dimensions: [String], from table: String, where conditions: String,
    rollup: Bool, limit: String?
  ) -> String {
    let columns = query.dimensions.indices.map { query.column(of: $0) }
    let selected =
      zip(dimensions, columns).map { "\($0) AS \($1)" } + keys + ["\(rollup ? "sum(events)" : "count(*)") AS e"]
    let inner =
      "SELECT \(selected.joined(separator: ", ")) FROM \(table) WHERE \(conditions) "
      + "GROUP BY \((columns + keys).joined(separator: ", "))"
    let measures = query.measures.map { measure in
      switch measure {
      case .devices: "count(*)"
      case .sessions: "count(CASE WHEN session_key <> '' THEN 1 END)"
      case .events, .total: "CAST(sum(e) AS BIGINT)"
      }
    }
    return query.statement(dimensions: columns, measures: measures, from: "(\(inner)) g", where: "TRUE", limit: limit)
  }

  /// Whether `query` reads its rollup through the index by the rollup's key
  /// (``SQLDialect/indexesRollupsByKey``): the names rollup grouped by name or of one name, by name
  /// and device; the sessions rollup without dimensions (totals, devices, sessions), by device and
  /// session; each when its range covers most of the app's stored hours
  /// (``readsRollupByKey(_:from:)``). `nil` when the store has no such index or the query reads
  /// the events, the counters, or the sessions rollup grouped (by hour or a version: read by
  /// device, those groups would be sorted).
  private func readsByKey(_ query: ReportQuery) async throws -> Bool? {
    guard store.dialect.indexesRollupsByKey, let table = rollupTable(for: query),
      query.rollup == .names || query.dimensions.isEmpty
    else { return nil }
    return try await readsRollupByKey(query.filter, from: table)
  }

  /// Whether a report over `table` (a rollup, or the item facts) reads it by its key rather than by
  /// time: the store indexes its rollups by key (``SQLDialect/indexesRollupsByKey``) and the filter's
  /// range covers at least a third of the app's stored time. Reading by time costs the rows in range
  /// and sorting them by key; by key, every row of the app (or of one name) and no sort, which at 1M
  /// events measured 3.4× faster for top events and 2× for the overview's totals when the range held
  /// them all (Docs/Benchmarks.md). `time` is the table's time column (indexed after `app`), each
  /// value standing for `width` ms from it.
  func readsRollupByKey(
    _ filter: ReportFilter, from table: String, time: String = "hour", width: Int64 = RollupTables.hour
  ) async throws -> Bool {
    guard store.dialect.indexesRollupsByKey else { return false }
    var sql = SQLBuilder(store.dialect)
    let (app, any) = (sql.bind(filter.storedApp), sql.bind(Int64.min))
    // Each bound by its own subquery: the index answers `min` and `max` alone, not together. The
    // condition on the time makes it the (app, time) index's seek: with only the app, SQLite took
    // the smaller index by key and read every row of the app (10M events: 120 ms, not 1).
    let span = try await rows(
      "SELECT (SELECT min(\(time)) FROM \(table) WHERE app = \(app) AND \(time) >= \(any)) AS lo, "
        + "(SELECT max(\(time)) FROM \(table) WHERE app = \(app) AND \(time) >= \(any)) AS hi", sql
    ).first
    guard let first = span?["lo"].int, let last = span?["hi"].int.map({ $0 + width }) else { return false }
    let covered = min(last, filter.to) - max(first, filter.from)
    return covered * 3 >= last - first
  }

  /// The rollup table that answers `query`, if one does (``ReportQuery/rollup``).
  private func rollupTable(for query: ReportQuery) -> String? {
    guard usesRollups, let tables = store.rollups else { return nil }
    return switch query.rollup {
    case .sessions: tables.sessions
    case .names: tables.names
    case nil: nil
    }
  }

  /// A dimension's expression: on the rollups (`rollup`) a bucket is of `hour`; `name` is how the
  /// name column is written.
  func expression(
    _ dimension: ReportQuery.Dimension, of query: ReportQuery, rollup: Bool, name: String, _ sql: inout SQLBuilder
  ) -> String {
    switch dimension {
    case .name: name
    case .context(let context): context.column
    case .parameter(let key): "coalesce(\(sql.parameter(key)), '(none)')"
    case .bucket(let bucket):
      query.filter.zone.bucketSQL(
        rollup ? "hour" : sql.ms(query.timeColumn), bucket, from: query.filter.from, to: query.filter.to
      ) { "(\($0) / \($1))" }
    }
  }

  private func expression(_ measure: ReportQuery.Measure, rollup: Bool, _ sql: SQLBuilder) -> String {
    switch measure {
    case .events: rollup ? "CAST(sum(events) AS BIGINT)" : "count(*)"
    case .devices: "count(DISTINCT device_id)"
    case .sessions: "count(DISTINCT \(rollup ? sql.rollupSessionKey : sql.sessionKey))"
    case .total: sql.saturatingSum("count")
    }
  }
}
