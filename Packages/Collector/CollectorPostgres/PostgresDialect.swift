import CollectorStore

/// PostgreSQL's SQL: times are `timestamptz`, `$n` placeholders, `jsonb` operators.
struct PostgresDialect: SQLDialect {
  func placeholder(_ index: Int) -> String { "$\(index)" }
  /// In `double precision`: `extract` answers a `numeric`, whose arithmetic cost 65 ms per 330,000
  /// rows where this costs 10–20 (a funnel's step events at 1M). The times are whole milliseconds
  /// (``time(_:)`` writes them so), and a double holds seconds since 1970 to well under a
  /// microsecond, so the rounded value is the exact millisecond.
  func milliseconds(_ column: String) -> String { "round(date_part('epoch', \(column)) * 1000)::bigint" }
  func time(_ placeholder: String) -> String { "to_timestamp(\(placeholder)::double precision / 1000)" }
  /// `sum` of `bigint` is an exact `numeric`, capped before the cast.
  func saturatingSum(_ column: String) -> String {
    "CAST(LEAST(coalesce(sum(\(column)), 0), 9223372036854775807) AS BIGINT)"
  }

  func parameterText(_ key: String, bind: (String) -> String) -> String {
    let key = bind(key)
    return PostgresParameterText.value(
      of: "", value: "(parameters -> \(key))", text: "(parameters ->> \(key))", key: key)
  }

  /// `jsonb_each`, each value as ``parameterText(_:bind:)`` reads it.
  func parameterEntries(ofEventsAs alias: String) -> (source: String, key: String, value: String) {
    let document = "\(alias).parameters"
    return (
      "jsonb_each(CASE jsonb_typeof(\(document)) WHEN 'object' THEN \(document) END) j", "j.key",
      PostgresParameterText.value(of: "\(alias).", value: "j.value", text: "(j.value #>> '{}')", key: "j.key")
    )
  }

  /// Under `"C"`: top items' distinct orders and buyers at 10M 1.26× faster by hand (Docs/Benchmarks.md).
  func bytewise(_ expression: String) -> String { "(\(expression) COLLATE \"C\")" }

  var parametersAsText: String { PostgresParameterText.read("parameters") }
  var smallerOfTwo: String { "least" }
  var largerOfTwo: String { "greatest" }
  var columnTypes: (text: String, double: String, integer: String) { ("text", "double precision", "int") }
  var fence: String { " OFFSET 0" }
  var countsDistinctByGrouping: Bool { true }
  var indexesRollupsByKey: Bool { false }
  var singleOrderMarks: SingleOrderMarks { .byBuild }

  func jsonValue(_ document: String, _ key: String) -> String { "(\(document) -> '\(key)')" }

  func jsonList(_ document: String, _ key: String) -> String {
    "(CASE jsonb_typeof(\(document) -> '\(key)') WHEN 'array' THEN \(document) -> '\(key)' END)"
  }

  func jsonText(_ value: String) -> String { "(CASE jsonb_typeof(\(value)) WHEN 'string' THEN \(value) #>> '{}' END)" }

  func jsonNumber(_ value: String) -> String {
    "(CASE WHEN jsonb_typeof(\(value)) = 'number' AND abs((\(value) #>> '{}')::numeric) < 1e15 "
      + "THEN (\(value) #>> '{}')::double precision END)"
  }

  func listElements(select: String, source: String) -> String {
    "\(select), i.position FROM (\(source)) e CROSS JOIN LATERAL "
      + "jsonb_array_elements(coalesce(e.f_items, '[]'::jsonb)) WITH ORDINALITY AS i(value, position) "
      + "WHERE jsonb_typeof(i.value) = 'object'"
  }

  /// `percentile_cont` interpolates the two middle values: their mean, exact in a `double` for
  /// durations in ms, its integer part as the collector would take it.
  func median(_ column: String) -> String? {
    "CAST(floor(percentile_cont(0.5) WITHIN GROUP (ORDER BY \(column))) AS BIGINT)"
  }

  /// PostgreSQL names the target by an alias in the conflict clause.
  func upsertTarget(_ table: String) -> (target: String, current: String) { ("\(table) AS current", "current") }
}
