/// What differs between the SQL engines where the shared SQL (rollups, persons, commerce facts,
/// reports) is written: each engine implements it in its own folder, and nothing else names an
/// engine. Every requirement returns a fragment of SQL built from trusted names and placeholders,
/// never from a client's text.
public protocol SQLDialect: Sendable {
  /// The numbered placeholder of the `index`th argument (from 1): `?3`, `$3`. Numbered, so the order
  /// in which parts of a query are built need not be the order in which they appear.
  func placeholder(_ index: Int) -> String
  /// A time column of the events table as milliseconds since 1970.
  func milliseconds(_ column: String) -> String
  /// A placeholder holding milliseconds, as a value comparable with a time column.
  func time(_ placeholder: String) -> String
  /// The sum of a column of client-sent counts, as a `BIGINT` that saturates at `Int64.max` instead
  /// of failing: a stored count can never make a report fail.
  func saturatingSum(_ column: String) -> String
  /// One top-level value of the `parameters` JSON as text (`true`/`false` for booleans, numbers as
  /// the collector stored them, which every engine answers alike); `bind` binds an argument and
  /// returns its placeholder.
  func parameterText(_ key: String, bind: (String) -> String) -> String
  /// Every top-level parameter of the parameters of the events row named `alias`, a row each, as a
  /// `FROM` item (`source`) and the expressions of its key and of its value as
  /// ``parameterText(_:bind:)`` reads it (`NULL` for JSON `null`); no rows when they are not an object.
  func parameterEntries(ofEventsAs alias: String) -> (source: String, key: String, value: String)
  /// The `parameters` column as JSON text, in a select list.
  var parametersAsText: String { get }
  /// The smaller of two values of a row (`min(a, b)`, `least(a, b)`).
  var smallerOfTwo: String { get }
  /// The larger of two values of a row.
  var largerOfTwo: String { get }
  /// The column types of text, double and integer columns.
  var columnTypes: (text: String, double: String, integer: String) { get }
  /// Ends a subquery so that it is not merged into the query around it (its columns are computed
  /// once per row).
  var fence: String { get }
  /// `document`'s `key` as extracted once, for ``jsonText(_:)``, ``jsonNumber(_:)`` and ``jsonList(_:_:)``.
  func jsonValue(_ document: String, _ key: String) -> String
  /// `document`'s `key` when it is a list, else `NULL`.
  func jsonList(_ document: String, _ key: String) -> String
  /// An extracted value (``jsonValue(_:_:)``) as text when it is a string, else `NULL`.
  func jsonText(_ value: String) -> String
  /// An extracted value as a double when it is a number under 10^15 in size, else `NULL` (so a sum can
  /// never overflow or fail).
  func jsonNumber(_ value: String) -> String
  /// `select` (columns of `e` and of the list element `i.value`, with its index as `position`) for
  /// every object in the list column `e.f_items` of the rows of `source`.
  func listElements(select: String, source: String) -> String
  /// The target of an upsert into `table` and how its `DO UPDATE … WHERE` names the row already there.
  func upsertTarget(_ table: String) -> (target: String, current: String)
  /// Whether distinct devices (or the sessions rollup's sessions) per group are counted faster by
  /// grouping by the device (and session) first and counting the groups (PostgreSQL hashes both
  /// steps or reads the groups in an index's order, where `count(DISTINCT)` sorts each group) than
  /// by `count(DISTINCT …)` (SQLite's is faster). Measured in Docs/Benchmarks.md.
  var countsDistinctByGrouping: Bool { get }
  /// Whether the rollups have indexes by their keys (SQLite: its planner sorts a wide range's rows
  /// otherwise; PostgreSQL hashes them): the names rollup by app, name and device
  /// (`rollup_names_by_name`), the sessions rollup by app, device and session
  /// (`rollup_sessions_by_device`), each partial on `device_id IS NOT NULL` (every row), so that
  /// only a query naming that term reads them; and the item facts by app, item and currency with
  /// every column top items reads (`rollup_items_by_item`, partial on `quantity >= 1`). Reports
  /// on the names rollup (grouped by name, or of one name), reports of totals, devices or sessions
  /// on the sessions rollup, and top items, over at least a third of an app's stored time, then read
  /// those indexes, and others the time range (``RollupTables``; measured in Docs/Benchmarks.md).
  var indexesRollupsByKey: Bool { get }
  /// How the store keeps its commerce facts' `single`: 1 on an order (and its items) whose
  /// transaction key no other order of the app has, else 0. Revenue and top items look for an earlier
  /// order of the same key only where `single` is 0 (SQLite: that probe was two thirds of revenue at
  /// 10M events; PostgreSQL: revenue 1.2x, top items 1.1x faster without it). A 0 where the key is
  /// alone only costs the probe; a 1 where another order has the key would count a transaction
  /// twice, and never stands.
  var singleOrderMarks: SingleOrderMarks { get }
  /// The median of a column of whole, non-negative numbers, the mean of the two middle values (its
  /// integer part) when they are even in number, as an aggregate; `nil` when the dialect has none
  /// (SQLite: the rows are then read and the median taken in the collector).
  func median(_ column: String) -> String?
  /// `conditions` on `table` written so that the rows they match are read in the table's own order,
  /// for a query that reads whole rows (a parameter's value): SQLite takes their rowids from an
  /// index, sorts them and reads each row once, page by page, instead of a random page per row (the
  /// purchases of four weeks at 10M events lie all over the file). The conditions as they are where
  /// the engine reads so already (PostgreSQL's bitmap heap scans).
  func inTableOrder(_ table: String, where conditions: String) -> String
  /// A text expression compared byte by byte, for `count(DISTINCT …)` and `max(…)` over many rows:
  /// PostgreSQL sorts text under the database's collation (`C.UTF-8` compares far slower than
  /// bytes; equality is the same in every deterministic collation, and bytes are SQLite's `BINARY`
  /// order). The expression as it is where text already compares by bytes.
  func bytewise(_ expression: String) -> String
}

extension SQLDialect {
  /// No median aggregate.
  public func median(_ column: String) -> String? { nil }
  /// The conditions as they are.
  public func inTableOrder(_ table: String, where conditions: String) -> String { conditions }
  /// The expression as it is.
  public func bytewise(_ expression: String) -> String { expression }
}

/// How a store keeps its commerce facts' `single` (``SQLDialect/singleOrderMarks``).
public enum SingleOrderMarks: Sendable, Hashable {
  /// Every write marks the orders it adds, and unmarks those sharing their keys
  /// (``CommerceSQL/markSingles(orders:items:events:where:)``): exact with one writer (SQLite).
  case byEveryWrite
  /// The device-set build marks the orders of the hours it builds while no write runs
  /// (``CommerceSQL/markSingles(orders:items:placeholder:)``), and the store unmarks every order
  /// sharing a key a write adds an order under, in that write: exact with writers at once
  /// (PostgreSQL, whose trigger on the orders does it for writers of every version).
  case byBuild
}
