import CollectorReports
import CollectorStore

/// Retention on ClickHouse from each unit's periods as the bits of one 64-bit mask, where the range
/// has at most 64 periods (days or weeks: the common case; longer ranges take the arrays of
/// ``ClickHouseReports/retention(_:period:byAppVersion:events:)``).
///
/// Each device's rows are grouped once by device into two masks, the periods it did the start
/// event in and those it did the return event in (`groupBitOr`), without grouping by (device,
/// period) first; a unit's masks are its devices' ORed. Units with the same masks count alike, so
/// they are counted per (starts, backs, version): a few hundred rows, whose bits are the cohort
/// (the lowest start) and the periods it counts in (the cohort, and each later return). Weekly
/// retention by device at 100M events: 1.9–2.1 s by (device, period) and arrays, 0.32–0.33 s by
/// masks, the same answer (`Docs/Benchmarks.md`). Over the rollup (any event, not by version) each
/// device's masks take the range's clean closed days from the newest build where they are most of
/// it (``closedPeriodMasks(_:period:)``).
extension ClickHouseReports {
  /// The rows of ``Retention/init(_:filter:period:byAppVersion:events:)`` (cohort, version, k,
  /// devices) from masks; the range must have at most 64 periods (``maskedPeriods``).
  func maskedRetention(
    _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents, people: Bool
  ) async throws -> [SQLRow] {
    let closed = events.isAny && !byAppVersion ? try await closedPeriodMasks(filter, period: period) : nil
    let masks = closed ?? periodMasks(filter, period: period, byAppVersion: byAppVersion, events: events)
    let units = units(of: masks, app: filter.storedApp, people: people, key: .hashes)
    // A unit's version: its first start event's, over its devices (the smallest at one time).
    let version = byAppVersion ? "argMinIf(v, (t, v), device_starts != 0)" : "''"
    let perUnit =
      "SELECT groupBitOr(device_starts) AS starts, groupBitOr(device_backs) AS backs, \(version) AS version "
      + "FROM (\(units)) GROUP BY \(UnitKey.hashes.unit) HAVING starts != 0"
    let counts =
      "SELECT starts, backs, version, toInt64(count()) AS c FROM (\(perUnit)) GROUP BY starts, backs, version"
    // The cohort's bit (the lowest start), and the bits it counts in: it, and the returns above it.
    // (No lambda reads a column here: 18.16 loses the columns such a lambda reads in a subquery.)
    let low = "bitAnd(starts, toUInt64(bitNot(starts) + 1))"
    let kept = "bitOr(low, bitAnd(backs, bitNot(bitOr(low, toUInt64(low - 1)))))"
    let bits = "arrayMap(x -> toInt64(log2(x)), bitmaskToArray(kept))"
    return try await rows(
      "SELECT cohort, version, q - cohort AS k, toInt64(sum(c)) AS devices FROM ("
        + "SELECT version, c, toInt64(log2(low)) AS cohort, arrayJoin(\(bits)) AS q FROM ("
        + "SELECT version, c, \(low) AS low, \(kept) AS kept FROM (\(counts)))) "
        + "GROUP BY cohort, version, k ORDER BY cohort, version, k")
  }

  /// One row per device (its hash, `device`): `device_starts` and `device_backs`, the bits of the
  /// periods (from the range's start) it did the start and the return event in, and with them its
  /// first start event's time (`t`) and version (`v`, the smallest of that millisecond) when split
  /// by version. On the rollup (any event: it keeps no names), each row's first event stands for
  /// its events, as in ``ClickHouseReports/retention(_:period:byAppVersion:events:)``'s periods.
  private func periodMasks(
    _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents
  ) -> String {
    let rollup = events.isAny ? activity(filter) : nil
    let time = rollup == nil ? "occurred_at" : "hour"
    let bit = Self.periodBit(time, filter, period)
    if let rollup {
      let version = byAppVersion ? ", min(f) AS t, argMin(app_version, (f, app_version)) AS v" : ""
      return
        "SELECT device, groupBitOr(b) AS device_starts, device_starts AS device_backs\(version) FROM ("
        + "SELECT device, \(bit) AS b, finalizeAggregation(first_ms) AS f, app_version FROM \(rollup) "
        + "WHERE \(Self.rollupConditions(filter))) GROUP BY device"
    }
    let isStart = events.start.map { "name = \(ClickHouseSQL.literal($0))" } ?? "1"
    let isBack = events.back.map { "name = \(ClickHouseSQL.literal($0))" } ?? "1"
    let named = events.start != nil && events.back != nil ? " AND name IN \(ClickHouseSQL.list(events.names))" : ""
    let version =
      byAppVersion
      ? ", minIf(occurred_at, \(isStart)) AS t, argMinIf(app_version, (occurred_at, app_version), \(isStart)) AS v"
      : ""
    return
      "SELECT \(UnitKey.hashes.deviceColumn(rollup: false)), groupBitOrIf(\(bit), \(isStart)) AS device_starts, "
      + "groupBitOrIf(\(bit), \(isBack)) AS device_backs\(version) FROM \(self.events) "
      + "WHERE \(Self.conditions(filter))\(named) GROUP BY device"
  }

  /// ``periodMasks(_:period:byAppVersion:events:)`` for any event, not by version, from the closed
  /// days (``closedDays(_:)``): a device's bits of the clean UTC days that lie wholly in one period
  /// of the filter's zone come from its build mask (one row a device, where the rollup has one a
  /// device and hour), the rest of the range from the rollup's hours, ORed by device. `nil` when no
  /// build answers, or its days that lie in one period are under half the range.
  private func closedPeriodMasks(_ filter: ReportFilter, period: ReportBucket) async throws -> String? {
    let day = ClickHouseSchema.dayLength
    let periodOf = { (utc: Int64) in (filter.zone.local(utc) - filter.zone.local(filter.from)) / period.milliseconds }
    let rows = try await closedDeviceRows(
      filter, keeps: { periodOf($0 * day) == periodOf($0 * day + day - 1) },
      built: { build, days in
        // Each period's bit when the device's mask meets that period's days: distinct bits, so
        // their sum is their OR.
        Dictionary(grouping: days) { periodOf($0 * day) }.sorted { $0.key < $1.key }.map {
          "if(bitAnd(days, toUInt64(\(build.mask($0.value)))) != 0, toUInt64(\(UInt64(1) << UInt64($0.key))), toUInt64(0))"
        }.joined(separator: " + ")
      },
      hours: Self.periodBit("hour", filter, period))
    return rows.map {
      "SELECT device, groupBitOr(v) AS device_starts, device_starts AS device_backs FROM (\($0)) GROUP BY device"
    }
  }

  /// The bit of the period (from `filter`'s start, in its zone) of `time`, an SQL expression of ms.
  private static func periodBit(_ time: String, _ filter: ReportFilter, _ period: ReportBucket) -> String {
    "bitShiftLeft(toUInt64(1), toUInt64(intDiv(\(Retention.localOffset(time, filter)), \(period.milliseconds))))"
  }
}
