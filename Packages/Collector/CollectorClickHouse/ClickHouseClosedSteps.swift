import CollectorReports

/// The funnel's part of the closed days (migration 13): `closed_name_times`, one row per (build,
/// app, name, device) with the times of every event of that name the device sent in the build's
/// days, built from each server's own events after the days' totals (so an event stored during the
/// build makes its day differ from the rollups and be read from the events, as for every closed
/// table). A funnel over the build's clean days then reads one row per (step name, device) instead
/// of grouping every step event of the range by device: the 3-step funnel at 10M events reads
/// 275,000 rows where it grouped 3.3M events (`Docs/Benchmarks.md`). A build made before this
/// table existed holds no times, and is not read: builds are recorded with their format since
/// migration 14 (``ClickHouseSchema/closedFormat``).
extension ClickHouseSchema {
  /// The built table of migration 13.
  static let closedSteps = [
    closed(
      "closed_name_times", "name String, device UInt64, times Array(Int64)", order: "name, device", shardBy: "device")
  ]

  /// Migration 13: the funnel's built table (filled by the next build).
  var closedStepsMigration: [String] { Self.closedSteps.flatMap(create) }

  /// The statement filling build `id`'s event times of `days` from this server's events, each row's
  /// sorted, so a device's events come to the walk's sort as a few sorted runs.
  func closedStepsBuild(id: Int64, days: ClosedRange<Int64>) -> String {
    let day = Self.dayLength
    return """
      INSERT INTO \(local("closed_name_times")) SELECT \(id), app, name, cityHash64(device_id) AS device,
        arraySort(groupArray(occurred_at))
      FROM \(local("events"))
      WHERE day >= \(Self.days([days.lowerBound * day])) AND day <= \(Self.days([days.upperBound * day]))
        AND occurred_at >= \(days.lowerBound * day) AND occurred_at < \((days.upperBound + 1) * day)
      GROUP BY app, name, device
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
    let day = ClickHouseSchema.dayLength
    let built = Self.runs(of: days).map { "(t >= \($0.lowerBound * day) AND t < \($0.upperBound * day))" }
    let rest = Self.restRanges(from: filter.from, to: filter.to, outside: days).map {
      "(occurred_at >= \($0.lowerBound) AND occurred_at < \($0.upperBound))"
    }
    let (from, time) = (ClickHouseSQL.literal(filter.from), "to\(format.timeType)")
    return """
      SELECT device, place, ts FROM (
        SELECT device, place, ts FROM (
          SELECT device, toUInt8(\(place)) AS place,
            arrayMap(t -> \(time)(t - \(from)), arrayFilter(t -> \(built.joined(separator: " OR ")), times)) AS ts
          FROM \(schema.table("closed_name_times"))
          WHERE build = \(build.id) AND app = \(ClickHouseSQL.literal(filter.storedApp)) AND name IN \(names))
        WHERE notEmpty(ts)
        UNION ALL
        SELECT \(Self.deviceHash) AS device, toUInt8(\(place)) AS place,
          arraySort(groupArray(\(time)(occurred_at - \(from)))) AS ts FROM \(events)
        WHERE \(matching) AND (\(rest.isEmpty ? "0" : rest.joined(separator: " OR ")))
        GROUP BY device, place
      )\(sorted ? " ORDER BY device" : "")
      """
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
