public import CollectorReports
import CollectorStore
import CollectorWire

/// Who is active on ClickHouse: active users and retention, in people or devices
/// (``ReportFilter/unit``), with the SQL engines' answers.
extension ClickHouseReports {
  /// Whether `filter` counts people here: it asks for them and a device of the app was identified
  /// (otherwise every device is a person of its own: the answers are the same, and devices are
  /// cheaper to count).
  func countsPeople(_ filter: ReportFilter) async throws -> Bool {
    guard filter.unit == .person else { return false }
    let app = ClickHouseSQL.literal(filter.storedApp)
    return try await !rows("SELECT 1 AS x FROM \(schema.persons) WHERE app = \(app) LIMIT 1").isEmpty
  }

  /// The rows of `devices` (a query with `key`'s device column, of `app`), each with its unit as
  /// `key` names it: with `people`, the device's person's or the device's own for a device never
  /// identified; without, the device's.
  func units(of devices: String, app: String, people: Bool, key: UnitKey) -> String {
    guard people else { return "SELECT \(key.device) AS \(key.unit), * FROM (\(devices))" }
    return "SELECT \(key.unitOfPerson) AS \(key.unit), * FROM (\(devices)) "
      + "ANY LEFT JOIN (\(schema.personOfDevice(app: ClickHouseSQL.literal(app), key: key))) USING \(key.device)"
  }

  public func activeDevices(_ filter: ReportFilter) async throws -> ActiveDevices {
    let people = try await countsPeople(filter)
    // DAU, WAU and MAU in one pass: each device's last active time in the 30 days, with its unit.
    var window = filter
    window.from = filter.zone.days(ActiveDevices.activeSpans.last ?? 0, before: filter.to)
    if let activity = activity(filter), self.activity(window) != nil {
      let found = try await rows(activeUnits(filter, activity, people: people, closed: closedLastActive(filter))).first
      return ActiveDevices(found, recent: found, unit: filter.unit)
    }
    // On the rollup, a device's last hour: every span starts on a whole hour where it answers.
    let last =
      if let activity = activity(window) {
        "SELECT device, max(hour) AS last FROM \(activity) WHERE \(Self.rollupConditions(window)) GROUP BY device"
      } else {
        "SELECT \(UnitKey.hashes.deviceColumn(rollup: false)), max(occurred_at) AS last FROM \(events) "
          + "WHERE \(Self.conditions(window)) GROUP BY device"
      }
    let counts = ActiveDevices.activeSpans.map {
      "toInt64(uniqExactIf(unit, last >= \(ClickHouseSQL.literal(filter.zone.days($0, before: filter.to))))) AS \(ActiveDevices.recentColumn($0))"
    }
    // The two queries at once: each one's grouping and join leave part of the two cores idle.
    async let recent = rows(
      "SELECT \(counts.joined(separator: ", ")) FROM (\(units(of: last, app: filter.storedApp, people: people, key: .hashes)))"
    )
    // Active in the range, and whether the unit has any event (of the app) before the range: a
    // person when any of their devices has.
    let rollup = activity(filter)
    let device = UnitKey.hashes.deviceColumn(rollup: rollup != nil)
    let active =
      "SELECT DISTINCT \(device) FROM \(rollup ?? events) "
      + "WHERE \(rollup == nil ? Self.conditions(filter) : Self.rollupConditions(filter))"
    async let split = rows(
      "SELECT toInt64(count()) AS active_devices, toInt64(countIf(\(seenBefore(filter, people: people)))) "
        + "AS returning_devices "
        + "FROM (SELECT DISTINCT unit FROM (\(units(of: active, app: filter.storedApp, people: people, key: .hashes))))"
    )
    return ActiveDevices(try await split.first, recent: try await recent.first, unit: filter.unit)
  }

  /// Active users from the rollup `activity` in one pass over the app's rows of the range and the
  /// 30 days before its end (the longest span): each device once, with its last hour of the
  /// filter's dimensions and whether it was seen before the range (``ClickHouseSchema/firstSeen``,
  /// of any dimensions: a unit seen before the range returns whatever its dimensions were then),
  /// each unit's the latest and any of its devices'; a unit is active in a span or the range when
  /// its last hour is in it, returning when it was seen before. What it reads grows with the range,
  /// not with the app's history (`Docs/Benchmarks.md`). `closed`: each device's last active time
  /// from the closed days instead (``closedLastActive(_:)``).
  private func activeUnits(_ filter: ReportFilter, _ activity: String, people: Bool, closed: String?) -> String {
    let dimensions = Self.dimensions(filter)
    // Ranges are bounded (years 1653 to 33658: ``ReportFilter``), so no span starts at `Int64.min`.
    let last =
      dimensions.isEmpty
      ? "hour" : "if(\(dimensions.joined(separator: " AND ")), hour, toInt64(-9223372036854775807) - 1)"
    let app = ClickHouseSQL.literal(filter.storedApp)
    let from = ClickHouseSQL.literal(filter.from)
    let start = min(filter.from, filter.zone.days(ActiveDevices.activeSpans.last ?? 0, before: filter.to))
    let devices =
      closed
      ?? "SELECT device, max(\(last)) AS d_last FROM \(activity) WHERE app = \(app) "
      + "AND hour >= \(ClickHouseSQL.literal(start)) AND hour < \(ClickHouseSQL.literal(filter.to)) GROUP BY device"
    let units = units(of: devices, app: filter.storedApp, people: people, key: .hashes)
    let perUnit =
      people
      ? "SELECT unit, max(d_last) AS last FROM (\(units)) GROUP BY unit" : "SELECT unit, d_last AS last FROM (\(units))"
    let spans = ActiveDevices.activeSpans.map { days in
      let since = ClickHouseSQL.literal(filter.zone.days(days, before: filter.to))
      return "toInt64(countIf(last >= \(since))) AS \(ActiveDevices.recentColumn(days))"
    }
    return "SELECT \(spans.joined(separator: ", ")), toInt64(countIf(last >= \(from))) AS active_devices, "
      + "toInt64(countIf(last >= \(from) AND \(seenBefore(filter, people: people)))) AS returning_devices "
      + "FROM (\(perUnit))"
  }

  /// Each device's last active time (`d_last`) in `filter`'s range and the 30 days before its end
  /// (``activeUnits(_:_:people:closed:)``'s span) from the closed days (``closedDays(_:)``), with no
  /// dimension: a clean UTC day no span starts inside stands for the device's hours in it (each
  /// `last >= start` of a span reads the same for any time of that day), as the day's start, the
  /// latest of its days in the build mask (one row a device, where the rollup has one a device and
  /// hour); the rest of the span from the rollup's hours. `nil` when no build answers, or those
  /// days are under half the span. At 100M events: 2.2–4× less than the hours, by hand
  /// (`Docs/Benchmarks.md`).
  private func closedLastActive(_ filter: ReportFilter) async throws -> String? {
    let starts = [filter.from] + ActiveDevices.activeSpans.map { filter.zone.days($0, before: filter.to) }
    var span = filter
    span.from = starts.min() ?? filter.from
    let day = ClickHouseSchema.dayLength
    let rows = try await closedDeviceRows(
      span, keeps: { clean in !starts.contains { $0 > clean * day && $0 < clean * day + day } },
      built: { build, days in
        let latest = days.sorted(by: >).map { "bitAnd(days, toUInt64(\(build.mask([$0])))) != 0, toInt64(\($0 * day))" }
        return "multiIf(\(latest.joined(separator: ", ")), toInt64(0))"
      }, hours: "hour")
    return rows.map { "SELECT device, max(v) AS d_last FROM (\($0)) GROUP BY device" }
  }

  /// Whether the row's `unit` was seen before `filter`'s range: a device first seen before it
  /// (``ClickHouseSchema/firstSeen``), or with `people` a person one of whose devices was. With
  /// people, the set holds the hashes of the devices seen and of those devices' people, with no
  /// join: an identified device's own hash is never a unit (its unit is its person's), so it
  /// matches nothing (10–20% faster than joining, `Docs/Benchmarks.md`). Read on the server reads
  /// go to, over every shard: a person's devices may be on several.
  private func seenBefore(_ filter: ReportFilter, people: Bool) -> String {
    let app = ClickHouseSQL.literal(filter.storedApp)
    let devices = schema.devicesSeen(app: app, before: ClickHouseSQL.literal(filter.from))
    guard people else { return "unit IN (\(devices))" }
    let persons = schema.personOfDevice(app: app, key: .hashes, among: devices)
    return "unit IN (\(devices) UNION ALL SELECT \(UnitKey.hashes.unitOfPerson) FROM (\(persons)))"
  }

  public func retention(
    _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents
  ) async throws -> Retention {
    try Retention.check(filter, period: period, events: events)
    let people = try await countsPeople(filter)
    guard Retention.periods(filter, period) > min(maskedPeriods, 64) else {
      let found = try await maskedRetention(
        filter, period: period, byAppVersion: byAppVersion, events: events, people: people)
      return Retention(found, filter: filter, period: period, byAppVersion: byAppVersion, events: events)
    }
    let perUnit = perUnit(
      filter, period: period, byAppVersion: byAppVersion, events: events, people: people, key: .hashes)
    // One row per unit, each period in its `periods` once: a count is the distinct units, without
    // the hash set of their ids `uniqExact` builds.
    let found = try await rows(
      "SELECT cohort, version, q - cohort AS k, toInt64(count()) AS devices FROM (\(perUnit)) "
        + "ARRAY JOIN periods AS q GROUP BY cohort, version, k ORDER BY cohort, version, k")
    return Retention(found, filter: filter, period: period, byAppVersion: byAppVersion, events: events)
  }

  public func retentionUnits(
    _ filter: ReportFilter, period: ReportBucket, events: RetentionEvents, cohort: Int64, offset: Int64, limit: Int
  ) async throws -> UnitList {
    let people = try await countsPeople(filter)
    let units = perUnit(filter, period: period, byAppVersion: false, events: events, people: people, key: .ids)
    let cell = "SELECT unit_id FROM (\(units)) WHERE cohort = \(cohort) AND has(periods, \(cohort + offset))"
    let count = try await rows("SELECT toInt64(count()) AS n FROM (\(cell))").first?["n"].int ?? 0
    let found = try await rows("SELECT unit_id FROM (\(cell)) ORDER BY unit_id LIMIT \(limit)")
    return UnitList(found, count: count, unit: filter.unit)
  }

  /// One row per unit with a start event: its cohort (the period of its first start event), the
  /// periods it counts in (the cohort's and each later one with a return event), and the app
  /// version of its first start event when split; units and devices named as `key` names them.
  private func perUnit(
    _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents, people: Bool,
    key: UnitKey
  ) -> String {
    let periods = periods(filter, period: period, byAppVersion: byAppVersion, events: events, key: key)
    let version = byAppVersion ? "argMinIf(v, (t, v), s = 1)" : "''"
    let unit = key.unit
    let units = units(of: periods, app: filter.storedApp, people: people, key: key)
    let perUnit =
      "SELECT \(unit), minIf(p, s = 1) AS cohort, groupUniqArrayIf(p, b = 1) AS backs, \(version) AS version "
      + "FROM (\(units)) GROUP BY \(unit) HAVING countIf(s = 1) > 0"
    return
      "SELECT \(unit), cohort, arrayConcat([cohort], arrayFilter(x -> x > cohort, backs)) AS periods, version "
      + "FROM (\(perUnit))"
  }

  /// Each device's active periods (`p`, from the range's start), whether it did the start (`s`) and
  /// the return event (`b`) in each, and with them its first start event's time (`t`) and version
  /// (`v`) when split by version; each device as `key` names it.
  private func periods(
    _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents, key: UnitKey
  ) -> String {
    // Each device's periods, with its first (start) event's time and version in each (the smallest
    // version among events of that millisecond) when versions are asked for, aggregated where the
    // events are. On the rollup (any event: it keeps no names), each hour's first event per device
    // and version stands for its events.
    let rollup = events.isAny ? activity(filter) : nil
    let time = rollup == nil ? "occurred_at" : "hour"
    let p = "intDiv(\(Retention.localOffset(time, filter)), \(period.milliseconds)) AS p"
    let isStart = events.start.map { "name = \(ClickHouseSQL.literal($0))" } ?? "1"
    let isBack = events.back.map { "name = \(ClickHouseSQL.literal($0))" } ?? "1"
    let named = events.start != nil && events.back != nil ? " AND name IN \(ClickHouseSQL.list(events.names))" : ""
    let selected = key.deviceColumn(rollup: rollup != nil)
    let device = key.device
    switch (rollup, byAppVersion) {
    case (let rollup?, true):
      return
        "SELECT \(device), \(p), min(first) AS t, argMin(app_version, (first, app_version)) AS v, 1 AS s, 1 AS b FROM "
        + "(SELECT \(device), hour, app_version, minMerge(first_ms) AS first FROM \(rollup) "
        + "WHERE \(Self.rollupConditions(filter)) GROUP BY \(device), hour, app_version) GROUP BY \(device), p"
    case (nil, true):
      return
        "SELECT \(selected), \(p), minIf(occurred_at, \(isStart)) AS t, "
        + "argMinIf(app_version, (occurred_at, app_version), \(isStart)) AS v, max(\(isStart)) AS s, max(\(isBack)) AS b "
        + "FROM \(self.events) WHERE \(Self.conditions(filter))\(named) GROUP BY \(device), p"
    case (let rollup?, false):
      return
        "SELECT \(device), \(p), 1 AS s, 1 AS b FROM \(rollup) WHERE \(Self.rollupConditions(filter)) GROUP BY \(device), p"
    case (nil, false):
      return
        "SELECT \(selected), \(p), max(\(isStart)) AS s, max(\(isBack)) AS b FROM \(self.events) "
        + "WHERE \(Self.conditions(filter))\(named) GROUP BY \(device), p"
    }
  }
}
