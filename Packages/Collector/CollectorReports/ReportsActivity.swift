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
    let any = try await rows("SELECT 1 AS x FROM \(persons) WHERE app = \(sql.bind(filter.storedApp)) LIMIT 1", sql)
    return any.isEmpty ? nil : persons
  }

  /// The rows of `devices` (a query with `app` and `device_id` columns), each with its `unit_id`: with
  /// `persons`, `u:` and the device's person or `d:` and a device never identified; without, the
  /// device. Queries reduce their rows to devices (or devices and periods) first, so only those are
  /// joined with the persons table.
  func units(of devices: String, persons: String?) -> String {
    guard let persons else { return "SELECT d.*, d.device_id AS unit_id FROM (\(devices)) d" }
    return PersonSQL.units(of: devices, persons: persons)
  }

  /// DAU, WAU and MAU at the end of the range; new against returning users in the range; in the
  /// filter's unit. The two queries run at once (each reads the sessions rollup on its own).
  public func activeDevices(_ filter: ReportFilter) async throws -> ActiveDevices {
    let persons = try await personsTable(filter)
    async let recentRow = recent(filter, persons: persons)
    let byDevice = try await readsSessionsByDevice(filter)
    var sql = SQLBuilder(store.dialect)
    // Active in the range, and whether the unit has any event (of the app) before the range.
    let (table, conditions, earlier) =
      if let rollups = rollups(filter) {
        (rollups.sessions, sql.rollupConditions(filter, byKey: byDevice), "hour < \(sql.bind(filter.from))")
      } else {
        (store.eventsTable, sql.conditions(filter), "occurred_at < \(sql.time(sql.bind(filter.from)))")
      }
    let app = sql.bind(filter.storedApp)
    let query: String
    if let persons {
      // A person is returning when any of their devices was active before: the people active before
      // the range, once.
      let active = units(of: "SELECT DISTINCT app, device_id FROM \(table) WHERE \(conditions)", persons: persons)
      let before = units(
        of: "SELECT DISTINCT app, device_id FROM \(table) WHERE app = \(app) AND \(earlier)", persons: persons)
      query =
        "SELECT count(*) AS active_devices, count(b.unit_id) AS returning_devices "
        + "FROM (SELECT DISTINCT unit_id FROM (\(active)) x) a "
        + "LEFT JOIN (SELECT DISTINCT unit_id FROM (\(before)) y) b ON b.unit_id = a.unit_id"
    } else {
      // A device's earlier events are one index seek away.
      query =
        "SELECT count(*) AS active_devices, coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM \(table) e2 "
        + "WHERE e2.app = \(app) AND e2.device_id = a.device_id AND e2.\(earlier)) THEN 1 ELSE 0 END), 0) "
        + "AS returning_devices FROM (SELECT DISTINCT device_id FROM \(table) WHERE \(conditions)) a"
    }
    let split = try await rows(query, sql).first
    return ActiveDevices(split, recent: try await recentRow, unit: filter.unit)
  }

  /// The row of the distinct units active in the last 1, 7 and 30 days of the range
  /// (``recentColumn(_:)``), in one pass: each device's last active time in the 30 days, with its
  /// unit.
  private func recent(_ filter: ReportFilter, persons: String?) async throws -> SQLRow? {
    var window = filter
    window.from = filter.zone.days(ActiveDevices.activeSpans.last ?? 0, before: filter.to)
    let byDevice = try await readsSessionsByDevice(window)
    var sql = SQLBuilder(store.dialect)
    let (table, conditions, last) =
      if let rollups = rollups(window) {
        (rollups.sessions, sql.rollupConditions(window, byKey: byDevice), "max(hour)")
      } else {
        (store.eventsTable, sql.conditions(window), "max(\(sql.ms("occurred_at")))")
      }
    let devices = "SELECT app, device_id, \(last) AS last FROM \(table) WHERE \(conditions) GROUP BY app, device_id"
    let counts = ActiveDevices.activeSpans.map { days in
      "count(DISTINCT CASE WHEN last >= \(sql.bind(filter.zone.days(days, before: filter.to))) THEN unit_id END) "
        + "AS \(ActiveDevices.recentColumn(days))"
    }
    return try await rows(
      "SELECT \(counts.joined(separator: ", ")) FROM (\(units(of: devices, persons: persons))) u", sql
    ).first
  }

  /// Cohorts of people or devices (the filter's unit) by the period of their first (start) event in
  /// the range, and the share of each active (doing the return event) in each following period up
  /// to the end of the range; optionally split by the app version of their first (start) events.
  public func retention(
    _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents
  ) async throws -> Retention {
    let tally = try await retentionTally(filter, period: period, byAppVersion: byAppVersion, events: events)
    return Retention(
      cells: tally.cells(byAppVersion: byAppVersion), filter: filter, period: period, byAppVersion: byAppVersion,
      events: events)
  }

  public func retentionUnits(
    _ filter: ReportFilter, period: ReportBucket, events: RetentionEvents, cohort: Int64, offset: Int64, limit: Int
  ) async throws -> UnitList {
    let tally = try await retentionTally(filter, period: period, byAppVersion: false, events: events)
    let units = tally.units(cohort: cohort, offset: offset)
    return UnitList(unit: filter.unit, count: Int64(units.count), units: Array(units.prefix(max(0, limit))))
  }

  /// Retention's units, from one row per device (`retentionDevices`) and, when the units are
  /// people, the app's device-to-person map.
  private func retentionTally(
    _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents
  ) async throws -> RetentionTally {
    try Retention.check(filter, period: period, events: events)
    async let persons = persons(filter)
    var sql = SQLBuilder(store.dialect)
    let devices = try await retentionDevices(
      filter, period: period, byAppVersion: byAppVersion, events: events, sql: &sql)
    return RetentionTally(try await rows(devices, sql), persons: try await persons)
  }

  /// One row per device (and app version, when split; and block of periods, over more than one
  /// block), as ``RetentionTally`` reads them: the device's first period (from the range's start)
  /// with a start event, that event's time, and a bit for each period with a return event. The
  /// rollups' rows come in device order (read by device over a wide range), so nothing is sorted
  /// unless the rows are split by version.
  private func retentionDevices(
    _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents, sql: inout SQLBuilder
  ) async throws -> String {
    // The rollups know no event names: they answer only "any event".
    let rollups = events.isAny ? rollups(filter) : nil
    let byDevice = try await rollups == nil ? false : readsSessionsByDevice(filter)
    let table = rollups?.sessions ?? store.eventsTable
    var conditions = rollups == nil ? sql.conditions(filter) : sql.rollupConditions(filter, byKey: byDevice)
    if let start = events.start, let back = events.back {
      conditions += " AND name IN (\(sql.bind(start)), \(sql.bind(back)))"
    }
    let isStart = events.start.map { "CASE WHEN name = \(sql.bind($0)) THEN 1 ELSE 0 END" } ?? "1"
    let isBack = events.back.map { "CASE WHEN name = \(sql.bind($0)) THEN 1 ELSE 0 END" } ?? "1"
    // Rows of (device, period, time, version, start, back): events, or rollup rows (their first
    // event's time).
    let (time, first) = rollups == nil ? (sql.ms("occurred_at"), sql.ms("occurred_at")) : ("hour", "first_ms")
    let activity =
      "SELECT device_id, \(Retention.localOffset(time, filter)) / \(period.milliseconds) AS p, \(first) AS t, "
      + "app_version AS v, \(isStart) AS s, \(isBack) AS b FROM \(table) WHERE \(conditions)"
    let perMask = RetentionTally.periodsPerMask
    let block = Retention.periods(filter, period) > perMask ? "p / \(perMask)" : "0"
    let bit = "CAST(1 AS BIGINT) << CAST(p % \(perMask) AS INTEGER)"
    let columns =
      ["device_id AS d", "\(block) AS k", "min(CASE WHEN s = 1 THEN p END) AS c"]
      + (byAppVersion ? ["v", "min(CASE WHEN s = 1 THEN t END) AS t"] : [])
      + ["CAST(sum(DISTINCT CASE WHEN b = 1 THEN \(bit) END) AS BIGINT) AS b"]
    let groups = ["device_id"] + (byAppVersion ? ["v"] : []) + (block == "0" ? [] : [block])
    return "SELECT \(columns.joined(separator: ", ")) FROM (\(activity)) r GROUP BY \(groups.joined(separator: ", "))"
  }
}

extension ActiveDevices {
  /// The days of DAU, WAU and MAU, in order: each counts the users active in that many days to the
  /// range's end.
  package static let activeSpans: [Int64] = [1, 7, 30]

  /// The column of the users active in the last `days` days, in the `recent` row of
  /// ``init(_:recent:unit:)``.
  package static func recentColumn(_ days: Int64) -> String { "active_\(days)d" }

  /// Active users from the split row (`active_devices`, `returning_devices`) and the `recent` row
  /// (a ``recentColumn(_:)`` for each of ``activeSpans``), all counted in `unit`.
  package init(_ split: SQLRow?, recent: SQLRow?, unit: ReportUnit) {
    let active = split?["active_devices"].int ?? 0
    let returning = split?["returning_devices"].int ?? 0
    let users = Self.activeSpans.map { recent?[Self.recentColumn($0)].int ?? 0 }
    self.init(
      daily: users[0], weekly: users[1], monthly: users[2], new: active - returning, returning: returning,
      unit: unit)
  }
}

extension Retention {
  /// Throws ``FieldError`` when retention cannot be answered: hours, more than 400 periods, or a
  /// bad event name.
  package static func check(_ filter: ReportFilter, period: ReportBucket, events: RetentionEvents = .any)
    throws(FieldError)
  {
    try events.check()
    guard period != .hour else { throw FieldError(field: "period", reason: "is day or week") }
    guard (filter.to - filter.from) / period.milliseconds <= 400 else {
      throw FieldError(field: "period", reason: "more than 400 \(period.rawValue)s in the range")
    }
  }

  /// The local time of `time` (an SQL expression of ms) since the range's start, in the filter's
  /// zone: whole periods of it are local days or weeks, 23 or 25 hours long across a DST change.
  package static func localOffset(_ time: String, _ filter: ReportFilter) -> String {
    let zone = filter.zone
    return "(\(zone.localSQL(time, from: filter.from, to: filter.to)) - \(zone.local(filter.from)))"
  }

  /// The periods of `filter`'s range: local days or weeks from its start, the last one cut short.
  package static func periods(_ filter: ReportFilter, _ period: ReportBucket) -> Int64 {
    let (zone, size) = (filter.zone, period.milliseconds)
    return (zone.local(filter.to) - zone.local(filter.from) + size - 1) / size
  }

  /// One cell of retention: the units of a cohort (its first period from the range's start, and
  /// its first version) active `offset` periods later.
  package struct Cell {
    /// What a cell is of: versions told apart, and ordered, by their bytes, as the databases do.
    package struct Key: Hashable {
      package var cohort: Int64
      package var version: ExactText
      package var offset: Int64
    }
    package var key: Key
    package var units: Int64
  }

  /// Retention from rows of (`cohort`, `version`, `k`, `devices`): devices of each cohort (its first
  /// period from the range's start, and its first version) active `k` periods later.
  package init(
    _ found: [SQLRow], filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents
  ) {
    let cells = found.map { row in
      Cell(
        key: Cell.Key(
          cohort: row["cohort"].int ?? 0, version: ExactText(row["version"].text ?? ""), offset: row["k"].int ?? 0),
        units: row["devices"].int ?? 0)
    }
    self.init(cells: cells, filter: filter, period: period, byAppVersion: byAppVersion, events: events)
  }

  /// Retention from its cells, in any order.
  package init(
    cells: [Cell], filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents
  ) {
    let size = period.milliseconds
    let (zone, origin) = (filter.zone, filter.zone.local(filter.from))
    let periods = Int(Self.periods(filter, period))
    var cohorts: [Cell.Key: Retention.Cohort] = [:]
    var order: [Cell.Key] = []
    // In the order of their keys, a cohort per period and version (offset 0 in the key).
    for cell in cells.sorted(by: {
      ($0.key.cohort, $0.key.version, $0.key.offset) < ($1.key.cohort, $1.key.version, $1.key.offset)
    }) {
      let (cohort, offset) = (cell.key.cohort, Int(cell.key.offset))
      let key = Cell.Key(cohort: cohort, version: cell.key.version, offset: 0)
      if cohorts[key] == nil {
        order.append(key)
        cohorts[key] = Retention.Cohort(
          start: zone.utc(local: origin + cohort * size), appVersion: byAppVersion ? key.version.text : nil, size: 0,
          active: Array(repeating: 0, count: max(0, periods - Int(cohort))), retained: [])
      }
      guard offset >= 0, offset < cohorts[key]!.active.count else { continue }
      cohorts[key]!.active[offset] = cell.units
    }
    let result = order.map { key -> Retention.Cohort in
      var cohort = cohorts[key]!
      cohort.size = cohort.active.first ?? 0
      cohort.retained = cohort.active.map { cohort.size == 0 ? 0 : Double($0) * 100 / Double(cohort.size) }
      return cohort
    }
    self.init(
      period: period,
      cohorts: result.sorted {
        ($0.start, SemanticVersion($0.appVersion ?? "")) < ($1.start, SemanticVersion($1.appVersion ?? ""))
      }, unit: filter.unit, events: events)
  }
}
