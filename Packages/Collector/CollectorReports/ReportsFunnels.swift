public import CollectorStore
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
    let found = try await funnelEvents(filter, steps: steps, limit: nil)
    return Funnel(found, steps: steps, window: window, appVersion: appVersion, unit: filter.unit)
  }

  public func funnelEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> [SQLRow] {
    let persons = try await personsTable(filter)
    var sql = SQLBuilder(store.dialect)
    let conditions = sql.conditions(filter)
    let names = Set(steps).map { sql.bind($0) }.joined(separator: ", ")
    let stepEvents =
      "SELECT app, device_id, name, \(sql.ms("occurred_at")) AS t, event_id FROM \(store.eventsTable) "
      + "WHERE \(conditions) AND name IN (\(names))"
    // Events of one millisecond keep their tracking order: CoreTracker's ids grow with each event.
    let ordered =
      "SELECT unit_id AS unit_key, name, t FROM (\(units(of: stepEvents, persons: persons))) u "
      + "ORDER BY unit_id, t, event_id"
    return try await rows(ordered + (limit.map { " LIMIT \(sql.bind(Int64($0) + 1))" } ?? ""), sql)
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
    // The order names the table's columns (`e.`): an engine whose select list turns the time into
    // milliseconds under the column's name would otherwise sort by that expression, every row of
    // the range (PostgreSQL: 0.8 s for the first page of 1M events instead of 1 ms).
    let found = try await rows(
      "SELECT \(columns) FROM \(store.eventsTable) e "
        + "WHERE \(conditions) ORDER BY e.occurred_at DESC, e.event_id DESC LIMIT \(sql.bind(Int64(page + 1)))", sql)
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
    eachUnit(found) { _, events in
      for step in 0..<walk(events, steps: steps, window: window).best { reached[step] += 1 }
    }
    return reached
  }

  /// Calls `body` with each unit's key (`unit_key`) and its rows, from rows ordered by unit.
  static func eachUnit(_ found: [SQLRow], _ body: (String, ArraySlice<SQLRow>) -> Void) {
    var index = 0
    while index < found.count {
      let unit = found[index]["unit_key"].text ?? ""
      var end = index
      while end < found.count, (found[end]["unit_key"].text ?? "") == unit { end += 1 }
      body(unit, found[index..<end])
      index = end
    }
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
  ///
  /// When `timed`, `fastest[k]` is the unit's quickest chain from a first step to step `k`: an
  /// event reaching `k` from the latest start is the quickest chain ending with it, so the least of
  /// those over the events is the quickest of all (the walk then reads every event).
  static func walk(_ events: ArraySlice<SQLRow>, steps: [String], window: Int64, timed: Bool = false)
    -> (best: Int, fastest: [Int64?])
  {
    var latest = [Int64?](repeating: nil, count: steps.count)
    var fastest = [Int64?](repeating: nil, count: timed ? steps.count : 0)
    var best = 0
    for event in events {
      let name = event["name"].text ?? ""
      let time = event["t"].int ?? 0
      for step in stride(from: steps.count - 1, through: 1, by: -1) where steps[step] == name {
        guard let start = latest[step - 1], time - start <= window else { continue }
        latest[step] = max(latest[step] ?? start, start)
        best = max(best, step + 1)
        if timed { fastest[step] = min(fastest[step] ?? .max, time - start) }
      }
      if steps[0] == name {
        latest[0] = time
        best = max(best, 1)
        if timed { fastest[0] = 0 }
      }
      if best == steps.count, !timed { break }
    }
    return (best, fastest)
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
