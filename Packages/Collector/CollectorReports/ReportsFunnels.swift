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
    let (found, persons) = try await stepEvents(filter, steps: steps)
    let reached = await Funnel.reached(found, persons: persons, steps: steps, window: window)
    return Funnel(reached: reached, steps: steps, window: window, appVersion: appVersion, unit: filter.unit)
  }

  /// The step events, read from the step cache where the range's hours are built
  /// (``cachedStepEvents(_:steps:)``), else from the `(app, name, occurred_at, device_id, event_id)`
  /// index alone, and put in order by unit here: a database sort of every step event (and a join with the
  /// persons per event) cost more than reading them (``Funnel/byUnit(_:persons:)``). Without a
  /// limit, the range's two halves are read at once, on two of the store's connections (reading
  /// is most of a large funnel's time, and each half's rows are made on its own core).
  public func funnelEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> [FunnelEvent] {
    guard let limit else {
      let (found, persons) = try await stepEvents(filter, steps: steps)
      return Funnel.byUnit(found, persons: persons)
    }
    return Funnel.byUnit(
      try await stepEvents(filter, steps: steps, limit: limit), persons: try await persons(filter))
  }

  /// All the step events of `filter`'s range, its two halves read at once, and the app's
  /// device-to-person map when the units are people.
  private func stepEvents(_ filter: ReportFilter, steps: [String]) async throws
    -> (StepEventColumns, persons: [ExactText: String]?)
  {
    async let mapped = persons(filter)
    if let cached = try await cachedStepEvents(filter, steps: steps) { return (cached, try await mapped) }
    guard filter.to - filter.from >= 2 * RollupTables.hour else {
      return (try await stepEvents(filter, steps: steps, limit: nil), try await mapped)
    }
    var (early, late) = (filter, filter)
    early.to = filter.from + (filter.to - filter.from) / 2
    late.from = early.to
    async let first = stepEvents(early, steps: steps, limit: nil)
    let second = try await stepEvents(late, steps: steps, limit: nil)
    var found = try await first
    found.append(contentsOf: second)
    return (found, try await mapped)
  }

  /// The app's device-to-person map, read once, when `filter`'s units are people; none (an app
  /// where no one signed in) means the units are devices, as ``personsTable(_:)`` decides for the
  /// other reports.
  func persons(_ filter: ReportFilter) async throws -> [ExactText: String]? {
    guard filter.unit == .person, let table = store.personsTable else { return nil }
    var sql = SQLBuilder(store.dialect)
    let mapped = try await rows(
      "SELECT device_id, person FROM \(table) WHERE app = \(sql.bind(filter.storedApp))", sql)
    return mapped.isEmpty
      ? nil
      : Dictionary(
        mapped.map { (ExactText($0["device_id"].text ?? ""), $0["person"].text ?? "") },
        uniquingKeysWith: { first, _ in first })
  }

  /// The step events of `filter`'s range as columns, `limit + 1` at most.
  func stepEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> StepEventColumns {
    var sql = SQLBuilder(store.dialect)
    let conditions = sql.conditions(filter)
    let names = Set(steps).map { sql.bind($0) }.joined(separator: ", ")
    return try await store.readStepEvents(
      "SELECT device_id, name, \(sql.ms("occurred_at")) AS t, event_id FROM \(store.eventsTable) "
        + "WHERE \(conditions) AND name IN (\(names))" + (limit.map { " LIMIT \(sql.bind(Int64($0) + 1))" } ?? ""),
      sql.arguments)
  }

  /// Sessions: how many, median duration (first to last event), events per session. Where the
  /// dialect has a median (``SQLDialect/median(_:)``), the store answers one row, not a row per
  /// session (PostgreSQL at 10M events: 500,000 rows read by the collector, 0.6 s of 1.4).
  public func sessions(_ filter: ReportFilter) async throws -> Sessions {
    let byDevice = try await readsSessionsByDevice(filter)
    var sql = SQLBuilder(store.dialect)
    var query: String
    if let rollups = rollups(filter) {
      if byDevice && store.dialect.median("d") == nil {
        return try await sessionsGroupedHere(filter, from: rollups.sessions)
      }
      // Read by device and session, the sessions come grouped: only their lengths are sorted.
      query =
        "SELECT max(last_ms) - min(first_ms) AS d, CAST(sum(events) AS BIGINT) AS n FROM \(rollups.sessions) "
        + "WHERE \(sql.rollupConditions(filter, byKey: byDevice)) AND session_key <> '' "
        + "GROUP BY device_id, session_key"
    } else {
      let ms = sql.ms("occurred_at")
      query =
        "SELECT max(\(ms)) - min(\(ms)) AS d, count(*) AS n FROM \(store.eventsTable) "
        + "WHERE \(sql.conditions(filter)) AND session_id IS NOT NULL GROUP BY device_id, session_id"
    }
    guard let median = store.dialect.median("d") else { return Sessions(try await rows(query + " ORDER BY d", sql)) }
    let totals = try await rows(
      "SELECT count(*) AS c, CAST(sum(n) AS BIGINT) AS e, \(median) AS m FROM (\(query)) s", sql
    ).first
    let count = totals?["c"].int ?? 0
    return Sessions(
      count: count, medianDuration: totals?["m"].int ?? 0,
      eventsPerSession: count == 0 ? 0 : Double(totals?["e"].int ?? 0) / Double(count))
  }

  /// Sessions from the rollup's rows read in its (device, session) index order and grouped here,
  /// where the dialect has no median (SQLite): each run of rows of one device and session is one
  /// session. SQLite's `GROUP BY` of the same rows took 0.64 s of the report's 0.92 at 10M events
  /// (about 0.12 s per aggregate over 500,000 rows); reading them takes a fraction of it.
  private func sessionsGroupedHere(_ filter: ReportFilter, from table: String) async throws -> Sessions {
    var sql = SQLBuilder(store.dialect)
    let found = try await rows(
      "SELECT device_id, session_key, first_ms, last_ms, events FROM \(table) "
        + "WHERE \(sql.rollupConditions(filter, byKey: true)) AND session_key <> '' ORDER BY device_id, session_key",
      sql)
    var lengths: [Int64] = []
    var events: Int64 = 0
    var start = found.startIndex
    while start < found.endIndex {
      let (device, session) = (found[start].values[0], found[start].values[1])
      var (first, last) = (Int64.max, Int64.min)
      var end = start
      // `SQLValue`s compare text by its bytes, as the database groups it.
      while end < found.endIndex && found[end].values[0] == device && found[end].values[1] == session {
        first = min(first, found[end].values[2].int ?? 0)
        last = max(last, found[end].values[3].int ?? 0)
        events += found[end].values[4].int ?? 0
        end += 1
      }
      lengths.append(last - first)
      start = end
    }
    return Sessions(lengths: lengths.sorted(), events: events)
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
}

extension Sessions {
  /// Sessions from rows of (`d`: duration in ms, `n`: events), one per session, ordered by `d`.
  package init(_ found: [SQLRow]) {
    self.init(lengths: found.map { $0["d"].int ?? 0 }, events: found.reduce(Int64(0)) { $0 + ($1["n"].int ?? 0) })
  }

  /// Sessions from their lengths in ms, shortest first, and their events in all.
  package init(lengths durations: [Int64], events: Int64) {
    let median: Int64 =
      durations.isEmpty
      ? 0
      : durations.count % 2 == 1
        ? durations[durations.count / 2]
        : (durations[durations.count / 2 - 1] + durations[durations.count / 2]) / 2
    self.init(
      count: Int64(durations.count), medianDuration: median,
      eventsPerSession: durations.isEmpty ? 0 : Double(events) / Double(durations.count))
  }
}
