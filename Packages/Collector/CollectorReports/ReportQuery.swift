public import CollectorWire

/// A counting question over the stored events or counters, declared once: what it reads, what it
/// groups by, what it measures, how the groups are ordered and how many come back.
///
/// Reports that count (top events, breakdowns, parameter values, counters, time series, version
/// adoption) are written once over it (``ReportEngine`` extensions); each engine translates it to
/// its own dialect in ``ReportEngine/aggregate(_:)``: the SQL engines to parameterised SQL, reading
/// the rollups when they can answer it, ClickHouse to its own SQL. The engines give the same rows
/// for the same query; the hand-computed report tests run against each.
///
/// ```swift
/// let query = try ReportQuery(filter, by: [.context(.platform)], measuring: [.events, .devices], limit: 10)
/// for row in try await engine.aggregate(query) {
///   print(row[query.column(of: 0)].text ?? "", row[.events], row[.devices])
/// }
/// ```
public struct ReportQuery: Sendable, Hashable {
  /// The rows a query reads.
  public enum Source: Sendable, Hashable {
    /// The events.
    case events
    /// SimpleAnalytics' counters (their time is when each was first counted).
    case counters
  }

  /// What rows are grouped by. Each comes back in a column of its own (``ReportQuery/column(of:)``).
  public enum Dimension: Sendable, Hashable {
    /// The event's or the counter's name.
    case name
    /// A context column: platform, app version, OS version, app name.
    case context(ReportDimension)
    /// One parameter of the event as text (`true`/`false` for booleans, numbers as written), or
    /// `(none)` when the event has no such parameter. Events only.
    case parameter(String)
    /// The time bucket: the time in ms since 1970 divided by the bucket's length.
    case bucket(ReportBucket)
  }

  /// What is measured in each group, in a column named ``column``.
  public enum Measure: String, Sendable, Hashable, CaseIterable {
    /// How many events (or counter rows).
    case events
    /// How many distinct devices.
    case devices
    /// How many distinct sessions (a device's session id; events without one belong to none).
    /// Events only.
    case sessions
    /// The counters' counts added up, saturating at `Int64.max`. Counters only.
    case total

    /// The result column holding the measure.
    public var column: String { "m_" + rawValue }
  }

  /// How the groups come back.
  public enum Order: Sendable, Hashable {
    /// The first measure largest first, ties by the dimensions in order.
    case largestFirst
    /// By the dimensions in order (a series in time order).
    case dimensions
  }

  /// The rows read.
  public let source: Source
  /// The app, the range and the filters.
  public let filter: ReportFilter
  /// Only rows of this name (an event's or a counter's), when set.
  public let name: String?
  /// What the rows are grouped by, in order.
  public let dimensions: [Dimension]
  /// What is measured, in order (at least one).
  public let measures: [Measure]
  /// The order of the groups.
  public let order: Order
  /// The most groups returned; `nil` for all.
  public let limit: Int?

  /// A query; throws ``FieldError`` for a parameter key or a name that is not report text, a
  /// parameter dimension on counters, or the counters' total over events.
  public init(
    _ filter: ReportFilter, of source: Source = .events, named name: String? = nil, by dimensions: [Dimension],
    measuring measures: [Measure], order: Order = .largestFirst, limit: Int? = nil
  ) throws(FieldError) {
    if let name { try ReportText.checkName(name, field: source == .events ? "event" : "counter") }
    for case .parameter(let key) in dimensions {
      try ReportText.check(key, field: "parameter")
      guard source == .events else { throw FieldError(field: "parameter", reason: "counters have no parameters") }
    }
    guard !measures.isEmpty else { throw FieldError(field: "measures", reason: "at least one is required") }
    guard source == .counters || !measures.contains(.total) else {
      throw FieldError(field: "measures", reason: "events have no total; count them")
    }
    guard source == .events || !measures.contains(.sessions) else {
      throw FieldError(field: "measures", reason: "counters have no sessions")
    }
    self.source = source
    self.filter = filter
    self.name = name
    self.dimensions = dimensions
    self.measures = measures
    self.order = order
    self.limit = limit.map { max(1, $0) }
  }

  /// The result column of the dimension at `index`.
  public func column(of index: Int) -> String { "d\(index)" }

  /// The activity rollups a store keeps (SQL: ``RollupTables``; ClickHouse: tables fed at insert),
  /// each a row per hour, device and dimensions.
  package enum Rollup: Sendable, Hashable {
    /// Per hour, device, session, platform, app version and OS version: events, first and last time.
    case sessions
    /// Per hour, event name, device, platform, app version and OS version: events.
    case names
  }

  /// The rollup that answers this query when its range allows (``ReportFilter/rollupsAnswer``):
  /// events by name, context dimensions (not the app name) or hour and day buckets, counted or by
  /// device; sessions only without names (the names rollup keeps no session).
  package var rollup: Rollup? {
    guard source == .events, filter.rollupsAnswer, !measures.contains(.total) else { return nil }
    var named = name != nil
    for dimension in dimensions {
      switch dimension {
      case .name: named = true
      case .context(let context) where context != .appName: continue
      case .bucket(let bucket) where bucket != .week: continue
      default: return nil
      }
    }
    if named && measures.contains(.sessions) { return nil }
    return named ? .names : .sessions
  }

  /// The time column of the source.
  package var timeColumn: String { source == .events ? "occurred_at" : "first_counted_at" }

  /// The statement of an engine's translation: `dimensions` and `measures` (its expressions of
  /// ``dimensions`` and ``measures``, in order) named as the results are read, from `table` where
  /// `conditions`, grouped, ordered, and limited by `limit` (a literal or a placeholder) when the
  /// query has a limit.
  package func statement(
    dimensions: [String], measures: [String], from table: String, where conditions: String, limit: String?
  ) -> String {
    let columns =
      zip(dimensions, self.dimensions.indices).map { "\($0) AS \(column(of: $1))" }
      + zip(measures, self.measures).map { "\($0) AS \($1.column)" }
    var statement = "SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE \(conditions)"
    if !dimensions.isEmpty {
      statement += " GROUP BY " + self.dimensions.indices.map { column(of: $0) }.joined(separator: ", ")
      statement += " ORDER BY \(orderBy)"
    }
    if let limit { statement += " LIMIT \(limit)" }
    return statement
  }

  /// The `ORDER BY` list, with each engine's names of the result columns.
  private var orderBy: String {
    let dimensions = self.dimensions.indices.map { column(of: $0) }
    switch order {
    case .largestFirst: return ([measures[0].column + " DESC"] + dimensions).joined(separator: ", ")
    case .dimensions: return dimensions.joined(separator: ", ")
    }
  }
}

extension ReportDimension {
  /// The context field a breakdown is by.
  package var field: ContextField {
    switch self {
    case .platform: .platform
    case .osVersion: .osVersion
    case .appVersion: .appVersion
    case .appName: .appName
    }
  }

  /// The events' column: the field's (``ContextField/column``).
  package var column: String { field.column }
}
