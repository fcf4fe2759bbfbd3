public import CollectorStore
package import CollectorWire
import Foundation

/// The reports of the SQL engines (SQLite and PostgreSQL): typed questions over a store, answered
/// with parameterised SQL the report layer writes itself (a client never sends SQL), in the store's
/// dialect.
///
/// ```swift
/// let reports = SQLReports(store: sqlite)
/// let filter = try ReportFilter(app: "ty", from: ReportTime.parse("2026-11-01")!, to: ReportTime.parse("2026-11-08")!)
/// let top = try await reports.topEvents(filter, limit: 20)
/// print(top.table.csv)
/// ```
public struct SQLReports: ReportEngine {
  /// The store read.
  public let store: any ReportQuerying
  /// Whether reports read the store's rollups where they can (ranges on whole hours).
  public let usesRollups: Bool

  /// Reports over `store`; `rollups: false` reads every event even where rollups would answer
  /// (results are the same, only slower; for comparisons and benchmarks).
  public init(store: any ReportQuerying, rollups: Bool = true) {
    self.store = store
    self.usesRollups = rollups
  }

  /// The rollups that can answer `filter`: the store keeps them and the range is on whole hours.
  func rollups(_ filter: ReportFilter) -> RollupTables? {
    guard usesRollups, let tables = store.rollups, filter.from % RollupTables.hour == 0,
      filter.to % RollupTables.hour == 0, filter.appName == nil
    else { return nil }
    return tables
  }

  func rows(_ sql: String, _ builder: SQLBuilder) async throws -> [SQLRow] {
    try await store.read(sql, builder.arguments)
  }

  /// The apps with events (at most 1,000, by name).
  public func apps() async throws -> [String] {
    // One index seek per app (a loose index scan), not a scan of every event.
    let table = store.eventsTable
    return try await store.read(
      "WITH RECURSIVE a(app) AS (SELECT min(app) FROM \(table) UNION ALL "
        + "SELECT (SELECT min(app) FROM \(table) WHERE app > a.app) FROM a WHERE a.app IS NOT NULL) "
        + "SELECT app FROM a WHERE app IS NOT NULL LIMIT 1000", []
    ).compactMap { $0["app"].text }
  }

  // MARK: Overview

  /// Events, devices, sessions and counter increments, for the range and the range before it.
  public func overview(_ filter: ReportFilter) async throws -> Overview {
    async let current = figures(filter)
    async let previous = figures(filter.previous)
    return Overview(current: try await current, previous: try await previous)
  }

  private func figures(_ filter: ReportFilter) async throws -> Overview.Figures {
    var sql = SQLBuilder(store.dialect)
    // With a persons table, devices are counted with the people, from one distinct-device query.
    let devices = store.personsTable == nil ? "count(DISTINCT device_id) AS devices, " : ""
    let query: String
    if let rollups = rollups(filter) {
      query =
        "SELECT CAST(coalesce(sum(events), 0) AS BIGINT) AS events, \(devices)"
        + "count(DISTINCT \(sql.rollupSessionKey)) AS sessions FROM \(rollups.sessions) WHERE \(sql.rollupConditions(filter))"
    } else {
      query =
        "SELECT count(*) AS events, \(devices)count(DISTINCT \(sql.sessionKey)) AS sessions FROM \(store.eventsTable) "
        + "WHERE \(sql.conditions(filter))"
    }
    async let mapped = people(filter)
    let events = try await rows(query, sql).first
    var counterSQL = SQLBuilder(store.dialect)
    let counterConditions = counterSQL.conditions(filter, timeColumn: "first_counted_at")
    let counters =
      try await rows(
        "SELECT \(counterSQL.saturatingSum("count")) AS counters FROM \(store.countersTable) WHERE \(counterConditions)",
        counterSQL
      ).first
    let (deviceCount, peopleCount) = try await mapped ?? (events?["devices"].int ?? 0, events?["devices"].int ?? 0)
    return Overview.Figures(
      events: events?["events"].int ?? 0, devices: deviceCount, people: peopleCount,
      sessions: events?["sessions"].int ?? 0, counters: counters?["counters"].int ?? 0)
  }

  /// The devices active in the range and the distinct people among them (``PersonSQL``); `nil` when
  /// the store keeps no device-to-person table.
  private func people(_ filter: ReportFilter) async throws -> (devices: Int64, people: Int64)? {
    guard let persons = store.personsTable else { return nil }
    var sql = SQLBuilder(store.dialect)
    let devices =
      if let rollups = rollups(filter) {
        "SELECT DISTINCT app, device_id FROM \(rollups.sessions) WHERE \(sql.rollupConditions(filter))"
      } else {
        "SELECT DISTINCT app, device_id FROM \(store.eventsTable) WHERE \(sql.conditions(filter))"
      }
    let query = PersonSQL(events: store.eventsTable, persons: persons, dialect: store.dialect).people(from: devices)
    let row = try await rows(query, sql).first
    return (row?["devices"].int ?? 0, row?["people"].int ?? 0)
  }

  // MARK: Counts

  /// Events by name: count and devices, most frequent first.
  public func topEvents(_ filter: ReportFilter, limit: Int) async throws -> CountList {
    try await countList(filter, dimension: "event", expression: "name", rollup: \.names, limit: limit)
  }

  /// Shares by platform, OS version or app version; versions newest first, in version order
  /// (`10.0` above `9.0`).
  public func breakdown(_ filter: ReportFilter, by dimension: ReportDimension) async throws -> CountList {
    // The rollups keep platform and versions; the app name is read from the events.
    var list = try await countList(
      filter, dimension: dimension.rawValue.replacingOccurrences(of: "-", with: " "), expression: dimension.column,
      rollup: dimension == .appName ? nil : \.sessions, limit: 1_000)
    if dimension == .appVersion || dimension == .osVersion {
      list.rows.sort { SemanticVersion($0.name) > SemanticVersion($1.name) }
    }
    return list
  }

  /// The most frequent values of one parameter of one event.
  public func parameterValues(_ filter: ReportFilter, event: String, parameter: String, limit: Int)
    async throws -> CountList
  {
    try ReportText.checkName(event, field: "event")
    try ReportText.check(parameter, field: "parameter")
    var sql = SQLBuilder(store.dialect)
    let value = sql.parameter(parameter)
    let conditions = sql.conditions(filter) + " AND name = \(sql.bind(event))"
    let found = try await rows(
      "SELECT coalesce(\(value), '(none)') AS v, count(*) AS n, count(DISTINCT device_id) AS devices FROM \(store.eventsTable) "
        + "WHERE \(conditions) GROUP BY v ORDER BY count(*) DESC, v LIMIT \(sql.bind(Int64(max(1, limit))))", sql)
    return CountList(dimension: parameter, rows: Self.countRows(found, label: "v"))
  }

  /// Counter totals per name (SimpleAnalytics' counters), largest first.
  public func counters(_ filter: ReportFilter, limit: Int) async throws -> CountList {
    var sql = SQLBuilder(store.dialect)
    let conditions = sql.conditions(filter, timeColumn: "first_counted_at")
    let found = try await rows(
      "SELECT name, \(sql.saturatingSum("count")) AS n, count(DISTINCT device_id) AS devices FROM \(store.countersTable) "
        + "WHERE \(conditions) GROUP BY name ORDER BY n DESC, name LIMIT \(sql.bind(Int64(max(1, limit))))",
      sql)
    return CountList(dimension: "counter", rows: Self.countRows(found, label: "name"))
  }

  private func countList(
    _ filter: ReportFilter, dimension: String, expression: String, rollup: KeyPath<RollupTables, String>?, limit: Int
  ) async throws -> CountList {
    var sql = SQLBuilder(store.dialect)
    let (table, count, conditions) =
      if let rollup, let rollups = rollups(filter) {
        (rollups[keyPath: rollup], "CAST(sum(events) AS BIGINT)", sql.rollupConditions(filter))
      } else {
        (store.eventsTable, "count(*)", sql.conditions(filter))
      }
    let found = try await rows(
      "SELECT \(expression) AS label, \(count) AS n, count(DISTINCT device_id) AS devices FROM \(table) WHERE \(conditions) "
        + "GROUP BY \(expression) ORDER BY n DESC, \(expression) LIMIT \(sql.bind(Int64(max(1, limit))))", sql)
    return CountList(dimension: dimension, rows: Self.countRows(found, label: "label"))
  }

  /// Rows of (`label`, `n`, `devices`) as counts with shares.
  package static func countRows(_ rows: [SQLRow], label: String) -> [CountRow] {
    // Shares from a double total: counts near Int64.max cannot overflow the sum.
    let total = rows.reduce(0.0) { $0 + Double($1["n"].int ?? 0) }
    return rows.map { row in
      let count = row["n"].int ?? 0
      return CountRow(
        name: row[label].text ?? "", count: count, devices: row["devices"].int ?? 0,
        share: total == 0 ? 0 : Double(count) * 100 / total)
    }
  }

  // MARK: Time

  /// Counts and devices per hour or day, for all events or one; every bucket of the range present.
  public func timeSeries(_ filter: ReportFilter, bucket: ReportBucket, event: String?) async throws
    -> TimeSeries
  {
    try Self.checkTimeSeries(filter, bucket: bucket, event: event)
    let size = bucket.milliseconds
    var sql = SQLBuilder(store.dialect)
    var (table, time, count, conditions) =
      if let rollups = rollups(filter) {
        (
          event == nil ? rollups.sessions : rollups.names, "hour", "CAST(sum(events) AS BIGINT)",
          sql.rollupConditions(filter)
        )
      } else {
        (store.eventsTable, sql.ms("occurred_at"), "count(*)", sql.conditions(filter))
      }
    if let event { conditions += " AND name = \(sql.bind(event))" }
    let found = try await rows(
      "SELECT (\(time) / \(size)) AS b, \(count) AS n, count(DISTINCT device_id) AS devices FROM \(table) "
        + "WHERE \(conditions) GROUP BY b ORDER BY b", sql)
    return Self.timeSeries(found, filter: filter, bucket: bucket, event: event)
  }

  /// Throws ``FieldError`` when a time series cannot be answered: weeks, more than 10,000 buckets,
  /// or an event name that is not report text.
  package static func checkTimeSeries(_ filter: ReportFilter, bucket: ReportBucket, event: String?) throws(FieldError) {
    guard bucket != .week else { throw FieldError(field: "bucket", reason: "is hour or day") }
    if let event { try ReportText.checkName(event, field: "event") }
    guard (filter.to - filter.from) / bucket.milliseconds <= 10_000 else {
      throw FieldError(field: "bucket", reason: "more than 10,000 \(bucket.rawValue)s in the range")
    }
  }

  /// A time series from rows of (`b`: time / bucket size, `n`, `devices`), every bucket present.
  package static func timeSeries(_ found: [SQLRow], filter: ReportFilter, bucket: ReportBucket, event: String?)
    -> TimeSeries
  {
    let size = bucket.milliseconds
    var byBucket: [Int64: (Int64, Int64)] = [:]
    for row in found { byBucket[row["b"].int ?? 0] = (row["n"].int ?? 0, row["devices"].int ?? 0) }
    let first = Self.floor(filter.from, size)
    var points: [TimeSeries.Point] = []
    var start = first
    while start < filter.to {
      let (count, devices) = byBucket[start / size] ?? (0, 0)
      points.append(TimeSeries.Point(start: start, count: count, devices: devices))
      start += size
    }
    return TimeSeries(bucket: bucket, event: event, points: points)
  }

  package static func floor(_ value: Int64, _ size: Int64) -> Int64 {
    value >= 0 ? value / size * size : -((-value + size - 1) / size) * size
  }
}

extension ReportDimension {
  /// The events' column.
  package var column: String {
    switch self {
    case .platform: "platform"
    case .osVersion: "os_version"
    case .appVersion: "app_version"
    case .appName: "app_name"
    }
  }
}
