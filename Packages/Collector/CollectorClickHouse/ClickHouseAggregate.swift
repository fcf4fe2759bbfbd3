public import CollectorReports
public import CollectorStore

/// ``ReportQuery`` in ClickHouse's SQL: the rollups where they answer (``ReportQuery/rollup``),
/// else the events without `FINAL` (writes leave no duplicate); counters with it (their rows are
/// replaced by design).
extension ClickHouseReports {
  /// The rows of `query`: one per group, the dimensions in `d0`, `d1`, …, each measure in its
  /// ``ReportQuery/Measure/column``.
  public func aggregate(_ query: ReportQuery) async throws -> [SQLRow] {
    try await aggregate(query, closed: closedDaysAnswer(query) ? try await closedDays(query.filter) : nil)
  }

  /// The rows of `query`, from the clean days `closed` where they answer it.
  func aggregate(_ query: ReportQuery, closed: CleanDays?) async throws -> [SQLRow] {
    if let rows = try await fromClosedDays(query, closed) { return rows }
    let rollup = usesRollups ? Self.rollup(of: query) : nil
    var (table, conditions) =
      switch (query.source, rollup) {
      case (.events, .sessions?): (schema.table("activity"), Self.rollupConditions(query.filter))
      case (.events, .names?): (schema.table("activity_names"), Self.rollupConditions(query.filter))
      case (.events, nil): (events, Self.conditions(query.filter))
      case (.counters, _):
        ("\(schema.counters) FINAL", Self.conditions(query.filter, time: query.timeColumn, dated: false))
      }
    if let name = query.name { conditions += " AND name = \(ClickHouseSQL.literal(name))" }
    let measures = query.measures.map { expression($0, rollup: rollup) }
    if let partitioned = Self.partitioned(query, measures, from: table, where: conditions, rollup: rollup) {
      return try await rows(partitioned)
    }
    let statement = query.statement(
      dimensions: query.dimensions.map { expression($0, of: query, rollup: rollup) },
      measures: measures, from: table, where: conditions, limit: query.limit.map(String.init))
    return try await rows(statement)
  }

  /// A total of sessions (with events and devices or not) counted in 16 parts by the device's hash
  /// and summed, or `nil` for any other query. One distinct count of 5M sessions is one hash set
  /// grown to 5M and the threads' sets merged in turn; 16 sets of a sixteenth each are smaller and
  /// merged apart: the overview's events and sessions at 100M events 0.80–0.85 s → 0.47–0.51, at
  /// 10M the same (`Docs/Benchmarks.md`). A device's sessions and events all fall in its part, so
  /// each measure is the sum of its parts. With dimensions it is not done: each group split 16
  /// ways costs more than it saves (top events 2.3–2.5 s → 5.8–6.6 at 100M, by hand).
  private static func partitioned(
    _ query: ReportQuery, _ measures: [String], from table: String, where conditions: String,
    rollup: ReportQuery.Rollup?
  ) -> String? {
    let additive: Set<ReportQuery.Measure> = [.events, .devices, .sessions]
    guard query.source == .events, query.dimensions.isEmpty, query.measures.contains(.sessions),
      query.measures.allSatisfy(additive.contains)
    else { return nil }
    let parts = query.statement(dimensions: [], measures: measures, from: table, where: conditions, limit: nil)
    let sums = query.measures.map { "toInt64(sum(\($0.column))) AS \($0.column)" }
    let part = "\(rollup == nil ? deviceHash : "device") % 16"
    return "SELECT \(sums.joined(separator: ", ")) FROM (\(parts) GROUP BY \(part))"
  }

  /// The rollup `query` reads here: its own (``ReportQuery/rollup``), except that a query of one
  /// event name reads the events. They are sorted by (app, day, name), so one name's rows are read
  /// alone; the names rollup is sorted by hour first, and a name's rows are spread over every hour's
  /// granules. At 100M events, one name's total: 0.10 s from the events against 0.56 from the
  /// rollup; its devices per hour 0.28 s against 0.78 (`Docs/Benchmarks.md`).
  static func rollup(of query: ReportQuery) -> ReportQuery.Rollup? {
    query.name != nil && query.rollup == .names ? nil : query.rollup
  }

  private func expression(_ dimension: ReportQuery.Dimension, of query: ReportQuery, rollup: ReportQuery.Rollup?)
    -> String
  {
    switch dimension {
    case .name: return "name"
    case .context(let context): return context.column
    case .parameter(let key):
      let index = "indexOf(param_keys, \(ClickHouseSQL.literal(key)))"
      return "if(\(index) = 0, '(none)', param_values[\(index)])"
    case .bucket(let bucket):
      let time = rollup == nil ? query.timeColumn : "hour"
      return query.filter.zone.bucketSQL(time, bucket, from: query.filter.from, to: query.filter.to) {
        "intDiv(\($0), \($1))"
      }
    }
  }

  /// A measure over the events, or over a rollup (events summed); devices are counted by their
  /// 64-bit hash on both, as the rollups keep them (``ClickHouseSchema/rollups``), and sessions by
  /// one hash of the device's and the session key (the same on both): a hash set of integers
  /// instead of strings or pairs, the same answer (sessions 2× faster at 10M events).
  private func expression(_ measure: ReportQuery.Measure, rollup: ReportQuery.Rollup?) -> String {
    switch (measure, rollup) {
    case (.events, nil): "toInt64(count())"
    case (.events, .sessions?): "toInt64(sumMerge(events))"
    case (.events, .names?): "toInt64(sum(events))"
    case (.devices, nil): "toInt64(uniqExact(\(Self.deviceHash)))"
    case (.devices, _?): "toInt64(uniqExact(device))"
    case (.sessions, nil):
      "toInt64(uniqExactIf(cityHash64(\(Self.deviceHash), toString(assumeNotNull(session_id))), isNotNull(session_id)))"
    case (.sessions, _?): "toInt64(uniqExactIf(cityHash64(device, session_key), session_key != ''))"
    case (.total, _): Self.saturatingSum("count")
    }
  }
}
