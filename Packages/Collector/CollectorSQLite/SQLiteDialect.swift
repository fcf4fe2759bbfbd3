import CollectorStore
import Foundation
import GRDBSQLite

/// SQLite's SQL: times are integers (ms since 1970), `?n` placeholders, `json_extract`.
struct SQLiteDialect: SQLDialect {
  func placeholder(_ index: Int) -> String { "?\(index)" }
  func milliseconds(_ column: String) -> String { column }
  func time(_ placeholder: String) -> String { placeholder }
  /// `total()` sums into a double (exact below 2^53, as counts are never negative) and its cast to
  /// `INTEGER` saturates.
  func saturatingSum(_ column: String) -> String { "CAST(total(\(column)) AS INTEGER)" }

  /// Whether the linked SQLite reads a value's JSON text with `->` (3.38 and later; Ubuntu 22.04
  /// has 3.37): without it a real's text is its `CAST`, 15 significant digits.
  static let readsJSONText = sqlite3_libversion_number() >= 3_038_000

  /// A real is read as written (`->`, its JSON text, where ``readsJSONText``): `CAST` to text keeps
  /// 15 significant digits and writes exponents its own way, so `0.30000000000000004` read as `0.3`,
  /// one group with `0.3`, and `1e+20` as `1.0e+20`. The cast is left for paths `->` does not
  /// follow (a key with an escape).
  func parameterText(_ key: String, bind: (String) -> String) -> String {
    let path = bind("$.\"" + key.replacingOccurrences(of: "\"", with: "\\\"") + "\"")
    return Self.typedText(
      type: "json_type(parameters, \(path))", written: "parameters -> \(path)",
      value: "json_extract(parameters, \(path))")
  }

  /// `json_each` (of valid JSON only: the type of invalid JSON is an error), its values typed as
  /// ``parameterText(_:bind:)`` types them.
  func parameterEntries(ofEventsAs alias: String) -> (source: String, key: String, value: String) {
    let document = "\(alias).parameters"
    return (
      "json_each(CASE WHEN json_valid(\(document)) THEN CASE json_type(\(document)) WHEN 'object' THEN \(document) END END) j",
      "j.key",
      Self.typedText(type: "j.type", written: "\(document) -> j.fullkey", value: "j.value")
    )
  }

  /// A JSON value as report text: `true`/`false` for booleans, a real as written, else its SQL value as text.
  private static func typedText(type: String, written: String, value: String) -> String {
    let real = readsJSONText ? "coalesce(\(written), CAST(\(value) AS TEXT))" : "CAST(\(value) AS TEXT)"
    return "(CASE \(type) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
      + "WHEN 'real' THEN \(real) ELSE CAST(\(value) AS TEXT) END)"
  }

  var parametersAsText: String { "parameters" }
  var smallerOfTwo: String { "min" }
  var largerOfTwo: String { "max" }
  var columnTypes: (text: String, double: String, integer: String) { ("TEXT", "REAL", "INTEGER") }
  var fence: String { " LIMIT -1 OFFSET 0" }
  var countsDistinctByGrouping: Bool { false }
  var indexesRollupsByKey: Bool { true }
  var singleOrderMarks: SingleOrderMarks { .byEveryWrite }

  /// The key is quoted in the path, so that keys with spaces (`Order ID`) are read. Only a string or
  /// a number is extracted: `json_extract` gives an object's or a list's JSON text as text and a
  /// boolean as 1 or 0, which ``jsonText(_:)`` and ``jsonNumber(_:)`` would take for a string or an
  /// amount (PostgreSQL and ClickHouse read the type).
  func jsonValue(_ document: String, _ key: String) -> String {
    let path = "'$.\"\(key)\"'"
    return "(CASE WHEN json_type(\(document), \(path)) IN ('text', 'integer', 'real') "
      + "THEN json_extract(\(document), \(path)) END)"
  }

  /// The type is read from the document: a string value would come out of `json_extract` unquoted.
  func jsonList(_ document: String, _ key: String) -> String {
    "(CASE json_type(\(document), '$.\"\(key)\"') WHEN 'array' THEN json_extract(\(document), '$.\"\(key)\"') END)"
  }

  func jsonText(_ value: String) -> String { "(CASE typeof(\(value)) WHEN 'text' THEN \(value) END)" }

  func jsonNumber(_ value: String) -> String {
    "(CASE WHEN typeof(\(value)) IN ('integer', 'real') AND abs(\(value)) < 1e15 THEN \(value) END)"
  }

  func listElements(select: String, source: String) -> String {
    "\(select), i.key AS position FROM (\(source)) e, json_each(coalesce(e.f_items, '[]')) AS i WHERE i.type = 'object'"
  }

  /// The rowids first, from the index the conditions choose; `IN` sorts them.
  func inTableOrder(_ table: String, where conditions: String) -> String {
    "rowid IN (SELECT rowid FROM \(table) WHERE \(conditions))"
  }

  /// SQLite names the target by the table's name in the conflict clause.
  func upsertTarget(_ table: String) -> (target: String, current: String) { (table, table) }
}
