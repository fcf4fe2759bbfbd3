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
      filter.to % RollupTables.hour == 0
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
    let query: String
    if let rollups = rollups(filter) {
      query =
        "SELECT CAST(coalesce(sum(events), 0) AS BIGINT) AS events, count(DISTINCT device_id) AS devices, "
        + "count(DISTINCT \(sql.rollupSessionKey)) AS sessions FROM \(rollups.sessions) WHERE \(sql.rollupConditions(filter))"
    } else {
      query =
        "SELECT count(*) AS events, count(DISTINCT device_id) AS devices, "
        + "count(DISTINCT \(sql.sessionKey)) AS sessions FROM \(store.eventsTable) "
        + "WHERE \(sql.conditions(filter))"
    }
    let events = try await rows(query, sql).first
    var counterSQL = SQLBuilder(store.dialect)
    let counterConditions = counterSQL.conditions(filter, timeColumn: "first_counted_at")
    let counters =
      try await rows(
        "SELECT \(counterSQL.saturatingSum("count")) AS counters FROM \(store.countersTable) WHERE \(counterConditions)",
        counterSQL
      ).first
    let devices = events?["devices"].int ?? 0
    return Overview.Figures(
      events: events?["events"].int ?? 0, devices: devices, people: try await people(filter) ?? devices,
      sessions: events?["sessions"].int ?? 0, counters: counters?["counters"].int ?? 0)
  }

  /// The distinct people among the devices active in the range (``PersonSQL``); `nil` when the store
  /// keeps no device-to-person table.
  private func people(_ filter: ReportFilter) async throws -> Int64? {
    guard let persons = store.personsTable else { return nil }
    var sql = SQLBuilder(store.dialect)
    let devices =
      if let rollups = rollups(filter) {
        "SELECT DISTINCT app, device_id FROM \(rollups.sessions) WHERE \(sql.rollupConditions(filter))"
      } else {
        "SELECT DISTINCT app, device_id FROM \(store.eventsTable) WHERE \(sql.conditions(filter))"
      }
    let query = PersonSQL(events: store.eventsTable, persons: persons, dialect: store.dialect).people(from: devices)
    return try await rows(query, sql).first?["people"].int
  }

  // MARK: Counts

  /// Events by name: count and devices, most frequent first.
  public func topEvents(_ filter: ReportFilter, limit: Int) async throws -> CountList {
    try await countList(filter, dimension: "event", expression: "name", rollup: \.names, limit: limit)
  }

  /// Shares by platform, OS version or app version; versions newest first, in version order
  /// (`10.0` above `9.0`).
  public func breakdown(_ filter: ReportFilter, by dimension: ReportDimension) async throws -> CountList {
    var list = try await countList(
      filter, dimension: dimension.rawValue.replacingOccurrences(of: "-", with: " "), expression: dimension.column,
      rollup: \.sessions, limit: 1_000)
    if dimension != .platform {
      list.rows.sort { SemanticVersion($0.name) > SemanticVersion($1.name) }
    }
    return list
  }

  /// The most frequent values of one parameter of one event.
  public func parameterValues(_ filter: ReportFilter, event: String, parameter: String, limit: Int)
    async throws -> CountList
  {
    try ReportText.check(event, field: "event")
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
    _ filter: ReportFilter, dimension: String, expression: String, rollup: KeyPath<RollupTables, String>, limit: Int
  ) async throws -> CountList {
    var sql = SQLBuilder(store.dialect)
    let (table, count, conditions) =
      if let rollups = rollups(filter) {
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
    if let event { try ReportText.check(event, field: "event") }
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

  /// DAU, WAU and MAU at the end of the range; new against returning devices in the range.
  public func activeDevices(_ filter: ReportFilter) async throws -> ActiveDevices {
    func distinct(_ days: Int64) async throws -> Int64 {
      var window = filter
      window.from = filter.to - days * 86_400_000
      var sql = SQLBuilder(store.dialect)
      let (table, conditions) =
        if let rollups = rollups(window) {
          (rollups.sessions, sql.rollupConditions(window))
        } else {
          (store.eventsTable, sql.conditions(window))
        }
      return try await rows("SELECT count(DISTINCT device_id) AS devices FROM \(table) WHERE \(conditions)", sql)
        .first?["devices"].int ?? 0
    }
    var sql = SQLBuilder(store.dialect)
    // Active in the range, and whether the device has any event (of the app) before the range.
    let (table, conditions, earlier) =
      if let rollups = rollups(filter) {
        (rollups.sessions, sql.rollupConditions(filter), "e2.hour < \(sql.bind(filter.from))")
      } else {
        (store.eventsTable, sql.conditions(filter), "e2.occurred_at < \(sql.time(sql.bind(filter.from)))")
      }
    let app = sql.bind(filter.app)
    let split =
      try await rows(
        "SELECT count(*) AS active_devices, coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM \(table) e2 "
          + "WHERE e2.app = \(app) AND e2.device_id = a.device_id AND \(earlier)) THEN 1 ELSE 0 END), 0) AS returning_devices "
          + "FROM (SELECT DISTINCT device_id FROM \(table) WHERE \(conditions)) a", sql
      ).first
    return try await Self.activeDevices(split, distinct: distinct)
  }

  /// Active devices from the split row (`active_devices`, `returning_devices`) and the distinct
  /// devices of the last `days` days of the range.
  package static func activeDevices(_ split: SQLRow?, distinct: (Int64) async throws -> Int64) async throws
    -> ActiveDevices
  {
    let active = split?["active_devices"].int ?? 0
    let returning = split?["returning_devices"].int ?? 0
    return ActiveDevices(
      daily: try await distinct(1), weekly: try await distinct(7), monthly: try await distinct(30),
      new: active - returning, returning: returning)
  }

  /// Cohorts of devices by the period of their first event in the range, and the share of each
  /// active in each following period up to the end of the range; optionally split by the app version
  /// of the devices' first events.
  public func retention(_ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool) async throws
    -> Retention
  {
    try Self.checkRetention(filter, period: period)
    let size = period.milliseconds
    var sql = SQLBuilder(store.dialect)
    let rollups = rollups(filter)
    let table = rollups?.sessions ?? store.eventsTable
    let conditions = rollups == nil ? sql.conditions(filter) : sql.rollupConditions(filter)
    let origin = sql.bind(filter.from)
    // Rows of (device, period, time, version): events, or rollup rows (their first event's time).
    let (time, first) = rollups == nil ? (sql.ms("occurred_at"), sql.ms("occurred_at")) : ("hour", "first_ms")
    let activity =
      "SELECT device_id, (\(time) - \(origin)) / \(size) AS p, \(first) AS t, app_version AS v FROM \(table) "
      + "WHERE \(conditions)"
    // A device's cohort is its first active period; its version that of its first event (the
    // smallest version among events of that millisecond). Window functions, no self-join.
    let perDevice =
      byAppVersion
      ? "SELECT device_id, p, min(p) OVER (PARTITION BY device_id) AS cohort, "
        + "first_value(v) OVER (PARTITION BY device_id ORDER BY t, v) AS version FROM (\(activity)) r"
      : "SELECT device_id, p, min(p) OVER (PARTITION BY device_id) AS cohort, CAST('' AS TEXT) AS version "
        + "FROM (SELECT device_id, p FROM (\(activity)) r0 GROUP BY device_id, p) r"
    let found = try await rows(
      "SELECT cohort, version, p - cohort AS k, count(DISTINCT device_id) AS devices FROM (\(perDevice)) x "
        + "GROUP BY cohort, version, k ORDER BY cohort, version, k", sql)
    return Self.retention(found, filter: filter, period: period, byAppVersion: byAppVersion)
  }

  /// Throws ``FieldError`` when retention cannot be answered: hours, or more than 400 periods.
  package static func checkRetention(_ filter: ReportFilter, period: ReportBucket) throws(FieldError) {
    guard period != .hour else { throw FieldError(field: "period", reason: "is day or week") }
    guard (filter.to - filter.from) / period.milliseconds <= 400 else {
      throw FieldError(field: "period", reason: "more than 400 \(period.rawValue)s in the range")
    }
  }

  /// Retention from rows of (`cohort`, `version`, `k`, `devices`): devices of each cohort (its first
  /// period from the range's start, and its first version) active `k` periods later.
  package static func retention(_ found: [SQLRow], filter: ReportFilter, period: ReportBucket, byAppVersion: Bool)
    -> Retention
  {
    let size = period.milliseconds
    let periods = Int((filter.to - filter.from + size - 1) / size)
    var cohorts: [String: Retention.Cohort] = [:]
    var order: [String] = []
    for row in found {
      let cohort = row["cohort"].int ?? 0
      let version = row["version"].text ?? ""
      let offset = Int(row["k"].int ?? 0)
      let key = "\(cohort)|\(version)"
      if cohorts[key] == nil {
        order.append(key)
        cohorts[key] = Retention.Cohort(
          start: filter.from + cohort * size, appVersion: byAppVersion ? version : nil, size: 0,
          active: Array(repeating: 0, count: max(0, periods - Int(cohort))), retained: [])
      }
      guard offset >= 0, offset < cohorts[key]!.active.count else { continue }
      cohorts[key]!.active[offset] = row["devices"].int ?? 0
    }
    let result = order.map { key -> Retention.Cohort in
      var cohort = cohorts[key]!
      cohort.size = cohort.active.first ?? 0
      cohort.retained = cohort.active.map { cohort.size == 0 ? 0 : Double($0) * 100 / Double(cohort.size) }
      return cohort
    }
    return Retention(
      period: period,
      cohorts: result.sorted {
        ($0.start, SemanticVersion($0.appVersion ?? "")) < ($1.start, SemanticVersion($1.appVersion ?? ""))
      })
  }

  package static func floor(_ value: Int64, _ size: Int64) -> Int64 {
    value >= 0 ? value / size * size : -((-value + size - 1) / size) * size
  }
}

/// The SQL engines' reports, by the name they had before engines were pluggable.
public typealias Reports = SQLReports

extension ReportDimension {
  /// The events' column.
  package var column: String {
    switch self {
    case .platform: "platform"
    case .osVersion: "os_version"
    case .appVersion: "app_version"
    }
  }
}
