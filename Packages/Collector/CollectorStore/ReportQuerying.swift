/// One value of a report query's arguments or results. Text values are equal when they are the
/// same bytes (``ExactText``), as the databases compare them, not when Swift's strings are equal.
public enum SQLValue: Sendable, Hashable {
  /// An integer.
  case int(Int64)
  /// A floating-point number.
  case double(Double)
  /// Text.
  case text(String)
  /// `NULL`.
  case null

  public static func == (lhs: SQLValue, rhs: SQLValue) -> Bool {
    switch (lhs, rhs) {
    case (.int(let one), .int(let other)): one == other
    case (.double(let one), .double(let other)): one == other
    case (.text(let one), .text(let other)): one.hasSameBytes(as: other)
    case (.null, .null): true
    default: false
    }
  }

  public func hash(into hasher: inout Hasher) {
    switch self {
    case .int(let value):
      hasher.combine(0 as UInt8)
      hasher.combine(value)
    case .double(let value):
      hasher.combine(1 as UInt8)
      hasher.combine(value)
    case .text(let value):
      hasher.combine(2 as UInt8)
      hasher.combine(ExactText(value))
    case .null: hasher.combine(3 as UInt8)
    }
  }

  /// The value as an integer (a whole double counts), or `nil`.
  public var int: Int64? {
    switch self {
    case .int(let value): value
    case .double(let value) where value.rounded() == value: Int64(value)
    case .text(let value): Int64(value)
    default: nil
    }
  }

  /// The value as a double, or `nil`.
  public var double: Double? {
    switch self {
    case .int(let value): Double(value)
    case .double(let value): value
    case .text(let value): Double(value)
    case .null: nil
    }
  }

  /// The value as text (numbers formatted), or `nil` for `NULL`.
  public var text: String? {
    switch self {
    case .int(let value): String(value)
    case .double(let value): String(value)
    case .text(let value): value
    case .null: nil
    }
  }
}

/// One result row of a report query: its values by the query's column names (`SELECT count(*) AS
/// events …` is read as `row["events"]`), so a query's columns can be reordered without its reader.
public struct SQLRow: Sendable, Hashable {
  /// The column names, in the query's order (shared by every row of a result).
  public let columns: [String]
  /// The values, in the query's order.
  public let values: [SQLValue]

  /// A row; `values` holds one value per column.
  public init(columns: [String], values: [SQLValue]) {
    self.columns = columns
    self.values = values
  }

  /// The value of `column`; `NULL` when the query has no such column (the reports' hand-computed
  /// tests catch a misspelt name: the figure reads 0).
  public subscript(_ column: String) -> SQLValue {
    guard let index = columns.firstIndex(of: column), index < values.count else { return .null }
    return values[index]
  }
}

/// A store the report layer can read with its own, parameterised SQL (never SQL from a client).
///
/// The report layer (CollectorReports) writes every query from typed report requests; a store
/// only runs it read-only and returns the rows.
public protocol ReportQuerying: Sendable {
  /// The store's SQL dialect.
  var dialect: any SQLDialect { get }
  /// The events table's qualified name.
  var eventsTable: String { get }
  /// The counters table's qualified name.
  var countersTable: String { get }
  /// The store's rollups, kept current with its events; `nil` when it keeps none (reports then read
  /// the events).
  var rollups: RollupTables? { get }
  /// The device-to-person table's qualified name (``PersonSQL``); `nil` when the store keeps none
  /// (reports then count every device as a person).
  var personsTable: String? { get }
  /// Runs one read-only query with `arguments` bound to its placeholders, in order; every column of
  /// the query is named (`AS name`) and read by that name.
  func read(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow]
  /// Runs one read-only query of a funnel's step events, whose columns are, in this order, the
  /// device id, the name, the time in ms (`t`) and the event id, and returns them as columns.
  func readStepEvents(_ sql: String, _ arguments: [SQLValue]) async throws -> StepEventColumns
  /// The store's device sets, kept from its names rollup (``DeviceSetTables``); `nil` when it keeps
  /// none (reports then count devices from the rollup's rows).
  var deviceSets: DeviceSetTables? { get }
  /// The rows of one read-only query whose column `devices`, when not `NULL`, is a set of device
  /// numbers (``DeviceSetCoding``): its other columns as ``read(_:_:)`` reads them, the set decoded.
  func readDeviceSets(_ sql: String, _ arguments: [SQLValue]) async throws -> [DeviceSetRow]
}

extension ReportQuerying {
  /// The rows ``read(_:_:)`` returns, as columns.
  public func readStepEvents(_ sql: String, _ arguments: [SQLValue]) async throws -> StepEventColumns {
    StepEventColumns(try await read(sql, arguments))
  }

  /// No rollups.
  public var rollups: RollupTables? { nil }
  /// No device-to-person table.
  public var personsTable: String? { nil }
  /// No device sets.
  public var deviceSets: DeviceSetTables? { nil }

  /// A store that keeps no device sets reads none (its reports never ask it to).
  public func readDeviceSets(_ sql: String, _ arguments: [SQLValue]) async throws -> [DeviceSetRow] {
    throw StoreError.unavailable("this store keeps no device sets")
  }
}
