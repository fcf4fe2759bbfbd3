import CollectorReports

/// The funnel's part of the closed days (migration 13, laid out again by 16): `closed_name_times`,
/// one row per (build, app, period, name, device) with the times of every event of that name the
/// device sent in the period's days of the build (``ClickHouseSchema/stepTimesPeriod``), built from each server's own events after the days' totals (so an event stored during the
/// build makes its day differ from the rollups and be read from the events, as for every closed
/// table). A funnel over the build's clean days then reads one row per (step name, device) instead
/// of grouping every step event of the range by device: the 3-step funnel at 10M events reads
/// 275,000 rows where it grouped 3.3M events (`Docs/Benchmarks.md`). A build made before this
/// table existed holds no times, and is not read: builds are recorded with their format since
/// migration 14 (``ClickHouseSchema/closedFormat``).
extension ClickHouseSchema {
  /// The built table of migration 13, laid out again by migration 16: a row per (period, name,
  /// device), its times in ms from the period's start in 4 bytes (``stepTimesPeriod``).
  static let closedSteps = [
    closed(
      "closed_name_times", "name String, device UInt64, period Int64, times Array(UInt32)",
      order: "period, name, device", shardBy: "device")
  ]

  /// The periods a build's step times are cut in, in ms: half the days a build may hold (32), whose
  /// times each fit 4 bytes. A build's periods end with its last day (``stepTimesOrigin(last:)``),
  /// so a range in its last 32 days (the dashboard's usual ranges) reads one period, a device's
  /// times of a name in one row. Against one row of 8-byte times for the whole build, the table
  /// holds 454 MB where it held 649 at 100M events, and the server's part of the 20-step funnel
  /// takes 0.44–0.51 s instead of 0.89–1.14 (`FORMAT Null`, `Docs/Benchmarks.md`).
  static let stepTimesPeriod: Int64 = closedSpan / 2 * dayLength

  /// Where period 0 of the step times of a build whose last UTC day is `last` starts (ms): its two
  /// periods end with that day, whatever its first.
  static func stepTimesOrigin(last: Int64) -> Int64 { (last + 1) * dayLength - 2 * stepTimesPeriod }

  /// Migration 13: the funnel's built table (filled by the next build).
  var closedStepsMigration: [String] { Self.closedSteps.flatMap(create) }

  /// Migration 16: the funnel's built table of 13 dropped and made again in periods (its rows are
  /// rebuilt by the next build: ``closedFormat`` 16).
  var closedStepPeriodsMigration: [String] {
    Self.closedSteps.flatMap { ["DROP TABLE IF EXISTS \(table($0.name))", "DROP TABLE IF EXISTS \(local($0.name))"] }
      + closedStepsMigration
  }

  /// The statement filling build `id`'s event times of `days` from this server's events, each row's
  /// sorted, so a device's events come to the walk's sort as a few sorted runs.
  func closedStepsBuild(id: Int64, days: ClosedRange<Int64>) -> String {
    let (day, period, origin) = (Self.dayLength, Self.stepTimesPeriod, Self.stepTimesOrigin(last: days.upperBound))
    return """
      INSERT INTO \(local("closed_name_times")) SELECT \(id), app, name, cityHash64(device_id) AS device,
        intDiv(occurred_at - \(origin), \(period)) AS period,
        arraySort(groupArray(toUInt32(occurred_at - \(origin) - period * \(period))))
      FROM \(local("events"))
      WHERE day >= \(Self.days([days.lowerBound * day])) AND day <= \(Self.days([days.upperBound * day]))
        AND occurred_at >= \(days.lowerBound * day) AND occurred_at < \((days.upperBound + 1) * day)
      GROUP BY app, name, device, period
      """
  }
}

extension ClickHouseReports {
  /// The step events of `filter`'s range, one row per step name and device, sorted by device when
  /// `sorted` (``FunnelRows``' rows, else ``GatheredFunnelRows``'), as `format` names them
  /// (``FunnelRowFormat/Kind/named``: the device's hash, the name's place `place`, its times in ms
  /// from the range's start, sorted): the clean days `closed` from the build's times of the step
  /// `names` (a list; `arrayFilter` to those days, no grouping), the rest of the range (its edges,
  /// days after the build, days with late events) from the events `matching` the filter and the
  /// names, grouped by device and name. The lambdas read only their arguments (18.16 loses the
  /// columns a lambda reads in a subquery).
  func closedStepRows(
    _ filter: ReportFilter, names: String, matching: String, place: String, format: FunnelRowFormat,
    closed: CleanDays, sorted: Bool
  ) -> String {
    let (build, days) = closed
    let rest = Self.restRanges(from: filter.from, to: filter.to, outside: days).map {
      "(occurred_at >= \($0.lowerBound) AND occurred_at < \($0.upperBound))"
    }
    let (app, time) = (ClickHouseSQL.literal(filter.storedApp), "to\(format.timeType)")
    // A branch a period, its times moved from the period's start to the range's.
    let origin = ClickHouseSchema.stepTimesOrigin(last: build.days.upperBound)
    let built = Self.periods(of: days, origin: origin).map { period, within in
      """
      SELECT device, toUInt8(\(place)) AS place,
        arrayMap(t -> \(time)(t + (\(origin + period * ClickHouseSchema.stepTimesPeriod - filter.from))),
          arrayFilter(t -> \(within), times)) AS ts
      FROM \(schema.table("closed_name_times"))
      WHERE build = \(build.id) AND app = \(app) AND name IN \(names) AND period = \(period)
      """
    }
    return """
      SELECT device, place, ts FROM (
        SELECT device, place, ts FROM (\(built.joined(separator: " UNION ALL ")))
        WHERE notEmpty(ts)
        UNION ALL
        SELECT \(Self.deviceHash) AS device, toUInt8(\(place)) AS place,
          arraySort(groupArray(\(time)(occurred_at - \(ClickHouseSQL.literal(filter.from))))) AS ts FROM \(events)
        WHERE \(matching) AND (\(rest.isEmpty ? "0" : rest.joined(separator: " OR ")))
        GROUP BY device, place
      )\(sorted ? " ORDER BY device" : "")
      """
  }

  /// The step-time periods (``ClickHouseSchema/stepTimesPeriod``, the first from `origin`) the
  /// clean `days` touch: each period's number, and the condition keeping its times (ms from its
  /// start, `t`) within those days.
  static func periods(of days: [Int64], origin: Int64) -> [(period: Int64, within: String)] {
    let (day, length) = (ClickHouseSchema.dayLength, ClickHouseSchema.stepTimesPeriod)
    var periods: [Int64: [String]] = [:]
    for run in runs(of: days) {
      let (start, end) = (run.lowerBound * day - origin, run.upperBound * day - origin)
      for period in start / length...(end - 1) / length {
        let base = period * length
        let (from, to) = (max(start, base) - base, min(end, base + length) - base)
        periods[period, default: []].append("(t >= \(from) AND t < \(to))")
      }
    }
    return periods.sorted { $0.key < $1.key }.map { ($0.key, $0.value.joined(separator: " OR ")) }
  }

  /// `days` (UTC days since 1970) as runs of consecutive days, each `first..<last + 1`.
  package static func runs(of days: [Int64]) -> [Range<Int64>] {
    var runs: [Range<Int64>] = []
    for day in days.sorted() {
      if let last = runs.last, last.upperBound == day {
        runs[runs.count - 1] = last.lowerBound..<day + 1
      } else {
        runs.append(day..<day + 1)
      }
    }
    return runs
  }
}
