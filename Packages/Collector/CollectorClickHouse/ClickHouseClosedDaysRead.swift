import CollectorReports
import CollectorStore

/// Top events, sessions and the overview from the closed days (``ClickHouseSchema/closedDays``). A
/// name's devices over the range are its build rows whose mask meets the range's clean built days,
/// less those also among the rest of the range's (name, device) pairs in the names rollup (matched
/// by `cityHash64(name, device)`), plus the distinct devices of that rest; its events are the
/// built days' totals plus the rest's. Sessions and devices likewise (``ClosedSessionsSQL``,
/// ``closedDevices(_:)``). At 100M events: top events 0.21–0.23 s, sessions 0.38–0.43, the
/// overview 0.72–0.81, against 2.4–3.4, 1.1–1.3 and 1.1–1.2 over the rollups' hours
/// (`Docs/Benchmarks.md`).
extension ClickHouseReports {
  /// The newest build and the whole UTC days of a report's range it answers (``closedDays(_:)``).
  typealias CleanDays = (build: ClosedBuild, days: [Int64])

  /// The newest recorded build of this schema's format (``ClickHouseSchema/closedFormat``), read
  /// from the server reads go to.
  static func closedBuild(_ client: ClickHouseClient, _ schema: ClickHouseSchema) async throws -> ClosedBuild? {
    let row = try await client.rows(
      "SELECT build, first_day, last_day FROM \(schema.local("closed_records")) "
        + "WHERE format = \(ClickHouseSchema.closedFormat) ORDER BY build DESC LIMIT 1"
    ).first
    guard let id = row?["build"].int, let first = row?["first_day"].int, let last = row?["last_day"].int,
      first <= last
    else { return nil }
    return ClosedBuild(id: id, days: first...last)
  }

  /// The newest build and the whole UTC days of `filter`'s range it answers (its days whose events
  /// equal the `activity` rollup's in both the names' totals and the sessions'), or `nil` when
  /// they are less than half the range, the filter has a platform or version, or the rollups do
  /// not answer it.
  func closedDays(_ filter: ReportFilter) async throws -> CleanDays? {
    guard activity(filter) != nil, Self.dimensions(filter).isEmpty,
      let build = try await Self.closedBuild(client, schema), let whole = build.wholeDays(of: filter)
    else { return nil }
    let day = ClickHouseSchema.dayLength
    let (start, end) = (whole.lowerBound, whole.upperBound)
    let app = ClickHouseSQL.literal(filter.storedApp)
    let ofBuild = "build = \(build.id) AND app = \(app) AND day >= \(start) AND day <= \(end)"
    // The days whose events differ (late events, or rows removed since).
    let changed = try await rows(
      """
      SELECT d, toInt64(sum(n)) AS n, toInt64(sum(b)) AS b, toInt64(sum(s)) AS s FROM (
        SELECT intDiv(hour, \(day)) AS d, toInt64(sumMerge(events)) AS n, toInt64(0) AS b, toInt64(0) AS s
        FROM \(schema.table("activity")) WHERE app = \(app) AND hour >= \(start * day) AND hour < \((end + 1) * day)
        GROUP BY d
        UNION ALL
        SELECT day AS d, toInt64(0) AS n, toInt64(sum(events)) AS b, toInt64(0) AS s
        FROM \(schema.table("closed_name_days")) WHERE \(ofBuild) GROUP BY d
        UNION ALL
        SELECT day AS d, toInt64(0) AS n, toInt64(0) AS b, toInt64(sum(events)) AS s
        FROM \(schema.table("closed_day_events")) WHERE \(ofBuild) GROUP BY d
      ) GROUP BY d HAVING n != b OR n != s
      """
    ).compactMap { $0["d"].int }
    let changedDays = Set(changed)
    let clean = (start...end).filter { !changedDays.contains($0) }
    return Self.mostlyCovered(filter, by: clean) ? (build, clean) : nil
  }

  /// Whether the clean UTC `days` are at least half of `filter`'s range: a build is read only then,
  /// as the rest is read twice (its pairs or keys as a set, and counted), so a range mostly outside
  /// the clean days costs less as it always did.
  static func mostlyCovered(_ filter: ReportFilter, by days: [Int64]) -> Bool {
    !days.isEmpty && Int64(days.count) * ClickHouseSchema.dayLength * 2 >= filter.to - filter.from
  }

  /// Whether the closed days may answer `query` (``fromClosedDays(_:_:)``): the overview's totals,
  /// or a query by name alone counting devices (and events).
  func closedDaysAnswer(_ query: ReportQuery) -> Bool {
    guard usesRollups, query.source == .events, query.name == nil else { return false }
    let measures = Set(query.measures)
    return query.dimensions.isEmpty
      ? measures.contains(.sessions) && measures.isSubset(of: [.events, .sessions])
      : Self.rollup(of: query) == .names && query.dimensions == [.name] && measures.contains(.devices)
        && measures.isSubset(of: [.events, .devices])
  }

  /// The rows of `query` from the clean days `closed` (``closedDays(_:)``), or `nil` when they do
  /// not answer it (``closedDaysAnswer(_:)``). The range's other hours (its edges in any zone, days
  /// after the build, days with late events) are read from the rollups.
  func fromClosedDays(_ query: ReportQuery, _ closed: CleanDays?) async throws -> [SQLRow]? {
    guard let (build, clean) = closed, closedDaysAnswer(query) else { return nil }
    if query.dimensions.isEmpty { return try await closedTotals(query, build: build, clean: clean) }
    let mask = build.mask(clean)
    let days = ClickHouseSQL.list(clean)
    let ofBuild = "build = \(build.id) AND app = \(ClickHouseSQL.literal(query.filter.storedApp))"
    let names = schema.table("activity_names")
    let rest = Self.restHours(query.filter, clean)
    let parts = """
      SELECT name, toInt64(sum(events)) AS e, toInt64(0) AS dv FROM \(schema.table("closed_name_days"))
      WHERE \(ofBuild) AND day IN \(days) GROUP BY name
      UNION ALL
      SELECT name, toInt64(0) AS e, toInt64(count()) AS dv FROM \(schema.table("closed_name_devices"))
      WHERE \(ofBuild) AND bitAnd(days, toUInt64(\(mask))) != 0
        AND cityHash64(name, device) NOT IN (SELECT cityHash64(name, device) FROM \(names) WHERE \(rest))
      GROUP BY name
      UNION ALL
      SELECT name, toInt64(sum(events)) AS e, toInt64(uniqExact(device)) AS dv FROM \(names) WHERE \(rest) GROUP BY name
      """
    let measures = query.measures.map { $0 == .events ? "toInt64(sum(e))" : "toInt64(sum(dv))" }
    return try await rows(
      query.statement(
        dimensions: ["name"], measures: measures, from: "(\(parts))", where: "1", limit: query.limit.map(String.init)))
  }

  /// The distinct devices (column `device`, their hashes) of `filter`'s range from its clean days
  /// `closed`, or `nil` when none: the build's devices whose mask meets the clean days, less those
  /// also in the rest of the range, and the rest's.
  func closedDevices(_ filter: ReportFilter, _ closed: CleanDays?) -> String? {
    guard let (build, clean) = closed else { return nil }
    let mask = build.mask(clean)
    let rest =
      "FROM \(schema.table("activity")) WHERE \(Self.restHours(filter, clean))"
    return """
      SELECT device FROM \(schema.table("closed_devices")) WHERE build = \(build.id)
        AND app = \(ClickHouseSQL.literal(filter.storedApp)) AND bitAnd(days, toUInt64(\(mask))) != 0
        AND device NOT IN (SELECT device \(rest))
      UNION ALL
      SELECT DISTINCT device \(rest)
      """
  }

  /// Each device's value over `filter`'s range from the closed days, as rows (`device`, `v`) to be
  /// combined per device: the build's devices whose mask meets the clean UTC days that `keeps`
  /// (a day a report's bucket or span starts inside is read from the hours), valued by `built` (an
  /// expression of the mask `days` and the days kept, ``ClosedBuild/mask(_:)``), and the rest of
  /// the range's rollup rows valued by `hours` (an expression of `hour`). `nil` when no build
  /// answers, or the days kept are under half the range. One row a device for most of the range,
  /// where the rollup has one a device and hour.
  func closedDeviceRows(
    _ filter: ReportFilter, keeps: (Int64) -> Bool, built: (ClosedBuild, [Int64]) -> String, hours: String
  ) async throws -> String? {
    guard let (build, clean) = try await closedDays(filter) else { return nil }
    let days = clean.filter(keeps)
    guard Self.mostlyCovered(filter, by: days) else { return nil }
    return """
      SELECT device, \(built(build, days)) AS v FROM \(schema.table("closed_devices"))
      WHERE build = \(build.id) AND app = \(ClickHouseSQL.literal(filter.storedApp))
        AND bitAnd(days, toUInt64(\(build.mask(days)))) != 0
      UNION ALL
      SELECT device, \(hours) AS v FROM \(schema.table("activity")) WHERE \(Self.restHours(filter, days))
      """
  }

  /// The rollup conditions of `filter` on the hours of its range outside the clean `days`, as
  /// ranges of `hour` (the sort key's second column, so only their rows are read; none when the
  /// days cover the range).
  static func restHours(_ filter: ReportFilter, _ days: [Int64]) -> String {
    let ranges = restRanges(from: filter.from, to: filter.to, outside: days).map {
      "(hour >= \($0.lowerBound) AND hour < \($0.upperBound))"
    }
    return "\(rollupConditions(filter)) AND (\(ranges.isEmpty ? "0" : ranges.joined(separator: " OR ")))"
  }

  /// The parts of `from..<to` (ms) outside the UTC days `days` (days since 1970, inside the range).
  package static func restRanges(from: Int64, to: Int64, outside days: [Int64]) -> [Range<Int64>] {
    let day = ClickHouseSchema.dayLength
    var ranges: [Range<Int64>] = []
    var start = from
    for clean in days.sorted() {
      if start < min(clean * day, to) { ranges.append(start..<min(clean * day, to)) }
      start = max(start, clean * day + day)
    }
    if start < to { ranges.append(start..<to) }
    return ranges
  }

  /// The sessions of `filter` from the closed days, or `nil` when they do not answer it
  /// (``closedDays(_:)``): one query; the median's two middle values are the 0.5 quantiles of the
  /// durations and of their negatives (`quantileExact` takes the value at rank ⌊0.5 × count⌋ of
  /// each order), so the count is not needed first.
  func closedSessions(_ filter: ReportFilter) async throws -> Sessions? {
    guard usesRollups, let (build, clean) = try await closedDays(filter) else { return nil }
    let sql = ClosedSessionsSQL(self, filter, build: build, days: clean)
    let perSession = """
      SELECT last_ms - first_ms AS d, events AS n \(sql.alone)
      UNION ALL
      SELECT max(l) - min(f) AS d, sum(e) AS n FROM (\(sql.grouped(times: true))) GROUP BY s
      """
    return Self.sessions(
      try await rows(
        "SELECT toInt64(count()) AS c, toInt64(sum(n)) AS e, "
          + "toInt64(intDiv(quantileExact(0.5)(d) - quantileExact(0.5)(-d), 2)) AS m FROM (\(perSession))"
      ).first)
  }

  /// The events and sessions of `query` (no dimension: the overview's) from the clean days, in the
  /// columns ``aggregate(_:)`` answers.
  private func closedTotals(_ query: ReportQuery, build: ClosedBuild, clean: [Int64]) async throws -> [SQLRow] {
    let sql = ClosedSessionsSQL(self, query.filter, build: build, days: clean)
    // One pass over the built sessions: those alone counted, the others' hashes kept in a state
    // merged with the rest's.
    let parts = """
      SELECT toInt64(sum(events)) AS e, toInt64(0) AS c, uniqExactIfState(toUInt64(0), 0) AS st \(sql.builtDayEvents)
      UNION ALL
      SELECT toInt64(sumMerge(events)) AS e, toInt64(0) AS c,
        uniqExactIfState(\(ClosedSessionsSQL.session), session_key != '') AS st \(sql.restHours)
      UNION ALL
      SELECT toInt64(0) AS e, toInt64(countIf(alone = 1 AND NOT r)) AS c, uniqExactIfState(session, alone = 0 OR r) AS st
      FROM (SELECT session, alone, \(sql.inRest) AS r \(sql.builtDays) AND keyed = 1)
      """
    let columns = query.measures.map {
      "\($0 == .events ? "toInt64(sum(e))" : "toInt64(sum(c)) + toInt64(uniqExactIfMerge(st))") AS \($0.column)"
    }
    return try await rows("SELECT \(columns.joined(separator: ", ")) FROM (\(parts))")
  }
}

/// The parts of a sessions query over the closed days: a session whose only day in the build is one
/// of the range's clean days, and which has no row in the rest of the range, is its row as built
/// (``alone``: most sessions, no grouping); the others' rows of the clean days and the rest's rollup
/// rows are grouped by session (``grouped(times:)``).
struct ClosedSessionsSQL {
  /// The rows of the clean days (`FROM … WHERE …`), with or without a session.
  let builtDays: String
  /// The events of the clean days (`FROM … WHERE …`, column `events`).
  let builtDayEvents: String
  /// The rollup rows of the rest of the range (`FROM … WHERE …`), with or without a session.
  let restHours: String
  /// A session's hash on the `activity` rollup, as the build names it.
  static let session = "cityHash64(device, cityHash64(session_key))"

  init(_ reports: ClickHouseReports, _ filter: ReportFilter, build: ClosedBuild, days: [Int64]) {
    let list = ClickHouseSQL.list(days)
    let ofBuild = "WHERE build = \(build.id) AND app = \(ClickHouseSQL.literal(filter.storedApp)) AND day IN \(list)"
    builtDays = "FROM \(reports.schema.table("closed_sessions")) \(ofBuild)"
    builtDayEvents = "FROM \(reports.schema.table("closed_day_events")) \(ofBuild)"
    restHours =
      "FROM \(reports.schema.table("activity")) WHERE \(ClickHouseReports.restHours(filter, days))"
  }

  /// Whether the row's session has rows in the rest of the range.
  var inRest: String { "session IN (SELECT \(Self.session) \(restHours) AND session_key != '')" }

  /// The sessions passing as built (`FROM … WHERE …`).
  var alone: String { "\(builtDays) AND keyed = 1 AND alone = 1 AND NOT \(inRest)" }

  /// The rows of the other sessions, `s` the session's hash, with their times and events (`f`, `l`,
  /// `e`) when `times`.
  func grouped(times: Bool) -> String {
    let (built, rest) =
      times
      ? (
        ", first_ms AS f, last_ms AS l, events AS e",
        ", finalizeAggregation(first_ms) AS f, finalizeAggregation(last_ms) AS l, finalizeAggregation(events) AS e"
      ) : ("", "")
    return """
      SELECT session AS s\(built) \(builtDays) AND keyed = 1 AND (alone = 0 OR \(inRest))
      UNION ALL
      SELECT \(Self.session) AS s\(rest) \(restHours) AND session_key != ''
      """
  }
}
