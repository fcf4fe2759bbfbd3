package import CollectorStore
package import CollectorWire
import Foundation

/// Who is active: active users and retention, in people or devices (``ReportFilter/unit``).
extension SQLReports {
  /// The persons table when `filter` counts people and the app has an identified device; `nil`
  /// when it counts devices, or no device of the app was ever identified (every device is then a
  /// person of its own: the answers are the same, and devices are cheaper to count).
  func personsTable(_ filter: ReportFilter) async throws -> String? {
    guard filter.unit == .person, let persons = store.personsTable else { return nil }
    var sql = SQLBuilder(store.dialect)
    let any = try await rows("SELECT 1 AS x FROM \(persons) WHERE app = \(sql.bind(filter.app)) LIMIT 1", sql)
    return any.isEmpty ? nil : persons
  }

  /// `table` as the `FROM` of a query that counts units, named `alias`, and the column naming one
  /// unit: with `persons`, a derived table of `table`'s rows each with its `unit_id` (`u:` and the
  /// device's person, or `d:` and a device never identified); without, `table` and `device_id`.
  func counted(_ table: String, persons: String?, alias: String) -> (source: String, unit: String) {
    guard let persons else { return ("\(table) \(alias)", "device_id") }
    return (
      "(SELECT t.*, coalesce('u:' || p.person, 'd:' || t.device_id) AS unit_id FROM \(table) t "
        + "LEFT JOIN \(persons) p ON p.app = t.app AND p.device_id = t.device_id) \(alias)",
      "unit_id"
    )
  }

  /// DAU, WAU and MAU at the end of the range; new against returning users in the range; in the
  /// filter's unit.
  public func activeDevices(_ filter: ReportFilter) async throws -> ActiveDevices {
    let persons = try await personsTable(filter)
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
      let (source, unit) = counted(table, persons: persons, alias: "e")
      return try await rows("SELECT count(DISTINCT \(unit)) AS devices FROM \(source) WHERE \(conditions)", sql)
        .first?["devices"].int ?? 0
    }
    var sql = SQLBuilder(store.dialect)
    // Active in the range, and whether the unit has any event (of the app) before the range.
    let (table, conditions, earlier) =
      if let rollups = rollups(filter) {
        (rollups.sessions, sql.rollupConditions(filter), "hour < \(sql.bind(filter.from))")
      } else {
        (store.eventsTable, sql.conditions(filter), "occurred_at < \(sql.time(sql.bind(filter.from)))")
      }
    let app = sql.bind(filter.app)
    let query: String
    if persons == nil {
      // A device's earlier events are one index seek away.
      query =
        "SELECT count(*) AS active_devices, coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM \(table) e2 "
        + "WHERE e2.app = \(app) AND e2.device_id = a.device_id AND e2.\(earlier)) THEN 1 ELSE 0 END), 0) "
        + "AS returning_devices FROM (SELECT DISTINCT device_id FROM \(table) WHERE \(conditions)) a"
    } else {
      // A person is returning when any of their devices was active before: the people active before
      // the range, once.
      let (active, unit) = counted(table, persons: persons, alias: "e")
      let (before, _) = counted(table, persons: persons, alias: "e2")
      query =
        "SELECT count(*) AS active_devices, count(b.unit_id) AS returning_devices "
        + "FROM (SELECT DISTINCT \(unit) AS unit_id FROM \(active) WHERE \(conditions)) a "
        + "LEFT JOIN (SELECT DISTINCT \(unit) AS unit_id FROM \(before) WHERE app = \(app) AND \(earlier)) b "
        + "ON b.unit_id = a.unit_id"
    }
    let split = try await rows(query, sql).first
    return try await Self.activeDevices(split, unit: filter.unit, distinct: distinct)
  }

  /// Active users from the split row (`active_devices`, `returning_devices`) and the distinct
  /// users of the last `days` days of the range, all counted in `unit`.
  package static func activeDevices(
    _ split: SQLRow?, unit: ReportUnit, distinct: (Int64) async throws -> Int64
  ) async throws -> ActiveDevices {
    let active = split?["active_devices"].int ?? 0
    let returning = split?["returning_devices"].int ?? 0
    return ActiveDevices(
      daily: try await distinct(1), weekly: try await distinct(7), monthly: try await distinct(30),
      new: active - returning, returning: returning, unit: unit)
  }

  /// Cohorts of people or devices (the filter's unit) by the period of their first event in the
  /// range, and the share of each active in each following period up to the end of the range;
  /// optionally split by the app version of their first events.
  public func retention(_ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool) async throws
    -> Retention
  {
    try Self.checkRetention(filter, period: period)
    let size = period.milliseconds
    let persons = try await personsTable(filter)
    var sql = SQLBuilder(store.dialect)
    let rollups = rollups(filter)
    let table = rollups?.sessions ?? store.eventsTable
    let conditions = rollups == nil ? sql.conditions(filter) : sql.rollupConditions(filter)
    let origin = sql.bind(filter.from)
    // Rows of (unit, period, time, version): events, or rollup rows (their first event's time); the
    // unit (a device or its person) is named `device_id` from here on.
    let (time, first) = rollups == nil ? (sql.ms("occurred_at"), sql.ms("occurred_at")) : ("hour", "first_ms")
    let (source, unit) = counted(table, persons: persons, alias: "e")
    let activity =
      "SELECT \(unit) AS device_id, (\(time) - \(origin)) / \(size) AS p, \(first) AS t, app_version AS v "
      + "FROM \(source) WHERE \(conditions)"
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
      }, unit: filter.unit)
  }
}
