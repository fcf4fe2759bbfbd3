import CollectorReports
import CollectorStore

/// Top events from the closed days (``ClickHouseSchema/closedDays``): a name's devices over the
/// range are its build rows whose mask meets the range's clean built days, less those also among the
/// rest of the range's (name, device) pairs in the names rollup (matched by `cityHash64(name,
/// device)`), plus the distinct devices of that rest; its events are the built days' totals plus the
/// rest's. At 100M events, 0.46 s for what takes 3.2–3.8 s over the rollup's hours
/// (`Docs/Benchmarks.md`).
extension ClickHouseReports {
  /// The newest recorded build, read from the server reads go to.
  static func closedBuild(_ client: ClickHouseClient, _ schema: ClickHouseSchema) async throws -> ClosedBuild? {
    let row = try await client.rows(
      "SELECT build, first_day, last_day FROM \(schema.local("closed_builds")) ORDER BY build DESC LIMIT 1"
    ).first
    guard let id = row?["build"].int, let first = row?["first_day"].int, let last = row?["last_day"].int,
      first <= last
    else { return nil }
    return ClosedBuild(id: id, days: first...last)
  }

  /// The rows of `query` from the closed days, or `nil` when they do not answer it: a query by name
  /// alone counting devices (and events), with no platform or version, a build holding a whole UTC
  /// day of the range whose events equal the rollups'. The range's other hours (its edges in any
  /// zone, days after the build, days with late events) are read from the names rollup.
  func fromClosedDays(_ query: ReportQuery) async throws -> [SQLRow]? {
    let filter = query.filter
    guard usesRollups, Self.rollup(of: query) == .names, query.name == nil, query.dimensions == [.name],
      query.measures.contains(.devices), Set(query.measures).isSubset(of: [.events, .devices]),
      Self.dimensions(filter).isEmpty, let build = try await Self.closedBuild(client, schema)
    else { return nil }
    let day = ClickHouseSchema.dayLength
    let start = max(build.days.lowerBound, filter.from <= 0 ? 0 : (filter.from + day - 1) / day)
    let end = min(build.days.upperBound, filter.to / day - 1)
    guard start <= end else { return nil }
    let app = ClickHouseSQL.literal(filter.storedApp)
    let ofBuild = "build = \(build.id) AND app = \(app)"
    // The days whose events differ from the `activity` rollup's (late events, or rows removed since).
    let changed = try await rows(
      """
      SELECT d, toInt64(sum(n)) AS n, toInt64(sum(b)) AS b FROM (
        SELECT intDiv(hour, \(day)) AS d, toInt64(sumMerge(events)) AS n, toInt64(0) AS b
        FROM \(schema.table("activity")) WHERE app = \(app) AND hour >= \(start * day) AND hour < \((end + 1) * day)
        GROUP BY d
        UNION ALL
        SELECT day AS d, toInt64(0) AS n, toInt64(sum(events)) AS b FROM \(schema.table("closed_name_days"))
        WHERE \(ofBuild) AND day >= \(start) AND day <= \(end) GROUP BY d
      ) GROUP BY d HAVING n != b
      """
    ).compactMap { $0["d"].int }
    let changedDays = Set(changed)
    let clean = (start...end).filter { !changedDays.contains($0) }
    guard !clean.isEmpty else { return nil }
    let mask = clean.reduce(UInt64(0)) { $0 | (UInt64(1) << UInt64($1 - build.days.lowerBound)) }
    let days = "(\(clean.map(String.init).joined(separator: ", ")))"
    let names = schema.table("activity_names")
    let rest = "\(Self.rollupConditions(filter)) AND intDiv(hour, \(day)) NOT IN \(days)"
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
}
