package import CollectorStore
package import CollectorWire
import Foundation

/// Funnels, sessions and the rows behind a report.
extension SQLReports {
  // MARK: Funnels and sessions

  /// People or devices (the filter's unit) that did `steps` in order, each within `window` ms of
  /// their first step; conversion from the first step and drop-off from the previous one. A person's
  /// events on all of their devices form one path.
  public func funnel(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?)
    async throws -> Funnel
  {
    let filter = try Funnel.filter(filter, steps: steps, window: window, appVersion: appVersion)
    let persons = try await personsTable(filter)
    var sql = SQLBuilder(store.dialect)
    let conditions = sql.conditions(filter)
    let names = Set(steps).map { sql.bind($0) }.joined(separator: ", ")
    let stepEvents =
      "SELECT app, device_id, name, \(sql.ms("occurred_at")) AS t, event_id FROM \(store.eventsTable) "
      + "WHERE \(conditions) AND name IN (\(names))"
    let found = try await rows(
      // Events of one millisecond keep their tracking order: CoreTracker's ids grow with each event.
      "SELECT unit_id AS unit_key, name, t FROM (\(units(of: stepEvents, persons: persons))) u ORDER BY unit_id, t, event_id",
      sql)
    return Funnel(found, steps: steps, window: window, appVersion: appVersion, unit: filter.unit)
  }

  /// Sessions: how many, median duration (first to last event), events per session.
  public func sessions(_ filter: ReportFilter) async throws -> Sessions {
    var sql = SQLBuilder(store.dialect)
    let query: String
    if let rollups = rollups(filter) {
      query =
        "SELECT max(last_ms) - min(first_ms) AS d, CAST(sum(events) AS BIGINT) AS n FROM \(rollups.sessions) "
        + "WHERE \(sql.rollupConditions(filter)) AND session_key <> '' GROUP BY device_id, session_key ORDER BY d"
    } else {
      let ms = sql.ms("occurred_at")
      query =
        "SELECT max(\(ms)) - min(\(ms)) AS d, count(*) AS n FROM \(store.eventsTable) "
        + "WHERE \(sql.conditions(filter)) AND session_id IS NOT NULL GROUP BY device_id, session_id ORDER BY d"
    }
    return Sessions(try await rows(query, sql))
  }

  // MARK: Detail rows

  /// Events that match `search`, newest first, `limit` per page; `after` is the previous page's
  /// `next`.
  public func eventRows(_ filter: ReportFilter, search: EventSearch, limit: Int, after: String?) async throws
    -> EventRows
  {
    try search.check()
    var sql = SQLBuilder(store.dialect)
    var conditions = sql.conditions(filter) + sql.conditions(search)
    if let (time, id) = try EventRows.cursor(after) {
      let timeBound = sql.time(sql.bind(time))
      let timeBound2 = sql.time(sql.bind(time))
      conditions += " AND (occurred_at < \(timeBound) OR (occurred_at = \(timeBound2) AND event_id < \(sql.bind(id))))"
    }
    let columns = EventRows.columns(milliseconds: sql.ms, parameters: store.dialect.parametersAsText)
    let page = max(1, min(limit, 1_000))
    let found = try await rows(
      "SELECT \(columns) FROM \(store.eventsTable) "
        + "WHERE \(conditions) ORDER BY occurred_at DESC, event_id DESC LIMIT \(sql.bind(Int64(page + 1)))", sql)
    return EventRows(found, page: page)
  }

  public func eventCount(_ filter: ReportFilter, search: EventSearch) async throws -> Int64 {
    try search.check()
    var sql = SQLBuilder(store.dialect)
    let conditions = sql.conditions(filter) + sql.conditions(search)
    return try await rows("SELECT count(*) AS n FROM \(store.eventsTable) WHERE \(conditions)", sql).first?["n"].int
      ?? 0
  }
}

extension SQLBuilder {
  /// `search`'s conditions, each after ` AND ` (empty for an empty search).
  mutating func conditions(_ search: EventSearch) -> String {
    var text = ""
    for (column, value) in search.columnMatches { text += " AND \(column) = \(bind(value))" }
    for match in search.parameters {
      let parameter = parameter(match.key)
      text += " AND \(parameter) = \(bind(match.value))"
    }
    return text
  }
}

extension Funnel {
  /// The most steps a funnel has.
  public static let mostSteps = 20

  /// Checks a funnel's steps, window and app version (``FieldError`` naming the parameter) and
  /// returns `filter` narrowed to the app version.
  package static func filter(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?)
    throws(FieldError) -> ReportFilter
  {
    guard (2...Funnel.mostSteps).contains(steps.count) else {
      throw FieldError(field: "steps", reason: "2 to \(Funnel.mostSteps) event names")
    }
    guard window > 0 else { throw FieldError(field: "window", reason: "must be positive") }
    for step in steps { try ReportText.checkName(step, field: "steps") }
    var filter = filter
    if let appVersion {
      try ReportText.check(appVersion, field: "funnelAppVersion")
      filter.appVersion = appVersion
    }
    return filter
  }
}

extension Funnel {
  /// The funnel from rows of (`unit_key`: the person or device, `name`, `t`) ordered by unit, time
  /// and event id.
  package init(
    _ found: [SQLRow], steps: [String], window: Int64, appVersion: String?, unit: ReportUnit
  ) {
    self.init(
      reached: Self.reached(found, steps: steps, window: window), steps: steps, window: window, appVersion: appVersion,
      unit: unit)
  }

  /// How many people or devices reached each step, from rows of (`unit_key`, `name`, `t`) ordered
  /// by unit, time and event id.
  package static func reached(_ found: [SQLRow], steps: [String], window: Int64) -> [Int64] {
    var reached = Array(repeating: Int64(0), count: steps.count)
    var index = 0
    while index < found.count {
      let unit = found[index]["unit_key"].text ?? ""
      var end = index
      while end < found.count, (found[end]["unit_key"].text ?? "") == unit { end += 1 }
      reached = Self.walk(found[index..<end], steps: steps, window: window, into: reached)
      index = end
    }
    return reached
  }

  /// The funnel from how many people or devices reached each step (`reached[i]`: step `i` or
  /// further).
  package init(
    reached: [Int64], steps: [String], window: Int64, appVersion: String?, unit: ReportUnit
  ) {
    let first = reached.first ?? 0
    let result = steps.enumerated().map { offset, name -> Funnel.Step in
      let previous = offset == 0 ? reached[0] : reached[offset - 1]
      return Funnel.Step(
        name: name, devices: reached[offset],
        conversion: first == 0 ? 0 : Double(reached[offset]) * 100 / Double(first),
        dropOff: offset == 0 || previous == 0 ? 0 : Double(previous - reached[offset]) * 100 / Double(previous))
    }
    self.init(window: window, appVersion: appVersion, steps: result, unit: unit)
  }

  /// The furthest step one person or device reached, in one pass over its events (linear in them,
  /// whatever their number): `latest[k]` is the latest start of a chain that has reached step `k`
  /// within the window of that start. A later start is never worse (it leaves more of the window),
  /// so keeping the latest is exact: the answer is that of walking from every first-step event and
  /// keeping the best attempt. Steps are advanced from the last to the first, so one event never
  /// counts as two steps.
  private static func walk(_ events: ArraySlice<SQLRow>, steps: [String], window: Int64, into reached: [Int64])
    -> [Int64]
  {
    var latest = [Int64?](repeating: nil, count: steps.count)
    var best = 0
    for event in events {
      let name = event["name"].text ?? ""
      let time = event["t"].int ?? 0
      for step in stride(from: steps.count - 1, through: 1, by: -1) where steps[step] == name {
        guard let start = latest[step - 1], time - start <= window else { continue }
        latest[step] = max(latest[step] ?? start, start)
        best = max(best, step + 1)
      }
      if steps[0] == name {
        latest[0] = time
        best = max(best, 1)
      }
      if best == steps.count { break }
    }
    var reached = reached
    for index in 0..<best { reached[index] += 1 }
    return reached
  }
}

extension Sessions {
  /// Sessions from rows of (`d`: duration in ms, `n`: events), one per session, ordered by `d`.
  package init(_ found: [SQLRow]) {
    let durations = found.map { $0["d"].int ?? 0 }
    let events = found.reduce(Int64(0)) { $0 + ($1["n"].int ?? 0) }
    let median: Int64 =
      durations.isEmpty
      ? 0
      : durations.count % 2 == 1
        ? durations[durations.count / 2]
        : (durations[durations.count / 2 - 1] + durations[durations.count / 2]) / 2
    self.init(
      count: Int64(found.count), medianDuration: median,
      eventsPerSession: found.isEmpty ? 0 : Double(events) / Double(found.count))
  }
}
