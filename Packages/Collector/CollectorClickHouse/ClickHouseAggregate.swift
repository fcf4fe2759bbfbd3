public import CollectorReports
public import CollectorStore

/// ``ReportQuery`` in ClickHouse's SQL: events without `FINAL` (writes leave no duplicate),
/// counters with it (their rows are replaced by design).
extension ClickHouseReports {
  /// The rows of `query`: one per group, the dimensions in `d0`, `d1`, …, each measure in its
  /// ``ReportQuery/Measure/column``.
  public func aggregate(_ query: ReportQuery) async throws -> [SQLRow] {
    var (table, conditions) =
      switch query.source {
      case .events: (events, Self.conditions(query.filter))
      case .counters:
        ("\(schema.counters) FINAL", Self.conditions(query.filter, time: query.timeColumn, dated: false))
      }
    if let name = query.name { conditions += " AND name = \(ClickHouseSQL.literal(name))" }
    let statement = query.statement(
      dimensions: query.dimensions.map { expression($0, of: query) }, measures: query.measures.map(expression),
      from: table, where: conditions, limit: query.limit.map(String.init))
    return try await rows(statement)
  }

  private func expression(_ dimension: ReportQuery.Dimension, of query: ReportQuery) -> String {
    switch dimension {
    case .name: return "name"
    case .context(let context): return context.column
    case .parameter(let key):
      let index = "indexOf(param_keys, \(ClickHouseSQL.literal(key)))"
      return "if(\(index) = 0, '(none)', param_values[\(index)])"
    case .bucket(let bucket):
      return query.filter.zone.bucketSQL(query.timeColumn, bucket, from: query.filter.from, to: query.filter.to) {
        "intDiv(\($0), \($1))"
      }
    }
  }

  private func expression(_ measure: ReportQuery.Measure) -> String {
    switch measure {
    case .events: "toInt64(count())"
    case .devices: "toInt64(uniqExact(device_id))"
    case .sessions: "toInt64(uniqExactIf(device_id, assumeNotNull(session_id), isNotNull(session_id)))"
    case .total: Self.saturatingSum("count")
    }
  }
}
