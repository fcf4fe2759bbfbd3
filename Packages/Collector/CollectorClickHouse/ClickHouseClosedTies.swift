import CollectorReports

/// The funnel's tied milliseconds of the closed days (migration 15): `closed_name_ties`, one row
/// per (build, app, device, millisecond) in which the device sent events of two or more names, with
/// those events' names in the order of their ids (tracking order). A funnel's packed events carry no
/// id, so a unit with two step events of different names in one millisecond is walked again with
/// those events in order (``ClickHouseReports/tiedReached(_:_:matching:walk:window:steps:closed:)``):
/// in a clean day of the build the order comes from here, a few rows by device, where reading it
/// from the events read the time of every step event of the range (the ties fall on every day:
/// 1–2.7 s of the funnels at 100M events, `Docs/Benchmarks.md`).
extension ClickHouseSchema {
  /// The built table of migration 15.
  static let closedTies = [
    closed(
      "closed_name_ties", "device UInt64, time Int64, names Array(String)", order: "device, time", shardBy: "device")
  ]

  /// Migration 15: the ties' built table (filled by the next build: ``closedFormat`` 15).
  var closedTiesMigration: [String] { Self.closedTies.flatMap(create) }

  /// The statement filling build `id`'s tied milliseconds of `days` from this server's events,
  /// after its step times (``closedStepsBuild(id:days:)``): the milliseconds a device's rows there
  /// share between two names, then those milliseconds' events, their names ordered by id.
  func closedTiesBuild(id: Int64, days: ClosedRange<Int64>) -> String {
    let day = Self.dayLength
    // A device's times of each name, distinct, all sorted together: a time twice is two names'.
    let (origin, period) = (Self.stepTimesOrigin(last: days.upperBound), Self.stepTimesPeriod)
    let tied = """
      SELECT app, device,
        toInt64(arrayJoin(arrayFilter((a, b) -> a = b, arrayPopBack(ts), arrayPopFront(ts)))) + \(origin) + period * \(period)
        AS time
      FROM (SELECT app, device, period, arraySort(groupArrayArray(arrayDistinct(times))) AS ts
        FROM \(local("closed_name_times")) WHERE build = \(id) GROUP BY app, device, period)
      """
    return """
      INSERT INTO \(local("closed_name_ties")) SELECT \(id), app, cityHash64(device_id) AS device, occurred_at AS time,
        arraySort((n, e) -> e, groupArray(name), groupArray(event_id))
      FROM \(local("events"))
      WHERE day >= \(Self.days([days.lowerBound * day])) AND day <= \(Self.days([days.upperBound * day]))
        AND occurred_at >= \(days.lowerBound * day) AND occurred_at < \((days.upperBound + 1) * day)
        AND (app, cityHash64(device_id), occurred_at) IN (\(tied))
      GROUP BY app, device, time
      HAVING min(name) != max(name)
      """
  }
}
