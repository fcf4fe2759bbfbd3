import CollectorWire

/// The kinds of value a stored column holds; each engine picks its own type for each.
public enum StoredColumnKind: Sendable, Hashable {
  /// Text.
  case text
  /// A 64-bit integer.
  case integer
  /// A time, as milliseconds since 1970 (UTC) to and from the store.
  case time
  /// A JSON object, as text to and from the store.
  case json
}

/// One stored column of a row (``StoredEvent``, ``StoredCounter``): its name, the kind of value
/// every engine maps to its own type, and how the row's field is read from it and written to it.
public struct StoredColumn<Row: Sendable>: Sendable {
  /// The column's name in every engine.
  public let name: String
  /// The kind of value.
  public let kind: StoredColumnKind
  /// Whether it may be `NULL`.
  public let isNullable: Bool
  /// The column's value for a row.
  public let value: @Sendable (Row) -> SQLValue
  /// Sets a row's field from the column's value.
  let assign: @Sendable (inout Row, SQLValue) -> Void

  static func text(_ name: String, _ field: any WritableKeyPath<Row, String> & Sendable, kind: StoredColumnKind = .text)
    -> Self
  {
    Self(
      name: name, kind: kind, isNullable: false, value: { .text($0[keyPath: field]) },
      assign: { $0[keyPath: field] = $1.text ?? (kind == .json ? "{}" : "") })
  }

  static func optionalText(_ name: String, _ field: any WritableKeyPath<Row, String?> & Sendable) -> Self {
    Self(
      name: name, kind: .text, isNullable: true, value: { $0[keyPath: field].map(SQLValue.text) ?? .null },
      assign: { $0[keyPath: field] = $1.text })
  }

  static func integer(
    _ name: String, _ field: any WritableKeyPath<Row, Int64> & Sendable, kind: StoredColumnKind = .integer
  ) -> Self {
    Self(
      name: name, kind: kind, isNullable: false, value: { .int($0[keyPath: field]) },
      assign: { $0[keyPath: field] = $1.int ?? 0 })
  }

  static func optionalInteger(_ name: String, _ field: any WritableKeyPath<Row, Int64?> & Sendable) -> Self {
    Self(
      name: name, kind: .integer, isNullable: true, value: { $0[keyPath: field].map(SQLValue.int) ?? .null },
      assign: { $0[keyPath: field] = $1.int })
  }

  /// The context's columns, one per ``ContextField``.
  static func context(_ context: any WritableKeyPath<Row, EventContext> & Sendable) -> [Self] {
    ContextField.allCases.map { field in
      Self(
        name: field.column, kind: .text, isNullable: false, value: { .text($0[keyPath: context][field]) },
        assign: { $0[keyPath: context][field] = $1.text ?? "" })
    }
  }
}

/// A row whose stored columns are declared once: every engine's inserts, select lists and row
/// readers derive from ``columns``.
public protocol StoredRow: Sendable {
  /// The row's columns, in table order.
  static var columns: [StoredColumn<Self>] { get }
  /// A row every field of which a read sets.
  static var blank: Self { get }
}

extension StoredRow {
  /// The row whose columns hold `value(column)`.
  public init(reading value: (StoredColumn<Self>) throws -> SQLValue) rethrows {
    self = Self.blank
    for column in Self.columns { column.assign(&self, try value(column)) }
  }

  /// The columns' names, in table order.
  public static var columnNames: String { columns.map(\.name).joined(separator: ", ") }
}

extension StoredEvent: StoredRow {
  public static let columns: [StoredColumn<Self>] =
    [
      .text("app", \.app), .text("event_id", \.eventID), .text("name", \.name), .text("kind", \.kind),
      .integer("occurred_at", \.occurredAt, kind: .time), .integer("utc_offset_minutes", \.utcOffset),
      .integer("received_at", \.receivedAt, kind: .time), .text("device_id", \.deviceID),
      .optionalText("user_id", \.userID), .optionalInteger("session_id", \.sessionID),
    ] + StoredColumn.context(\.context) + [.text("parameters", \.parametersJSON, kind: .json)]

  public static let blank = StoredEvent(
    app: "", eventID: "", name: "", kind: "", occurredAt: 0, utcOffsetMinutes: 0, receivedAt: 0, deviceID: "",
    userID: nil, sessionID: nil, context: EventContext(), parametersJSON: "{}")

  private var utcOffset: Int64 {
    get { Int64(utcOffsetMinutes) }
    set { utcOffsetMinutes = Int(clamping: newValue) }
  }
}

extension StoredCounter: StoredRow {
  public static let columns: [StoredColumn<Self>] =
    [
      .text("app", \.app), .text("counter_id", \.counterID), .text("device_id", \.deviceID), .text("name", \.name),
      .integer("count", \.count), .integer("first_counted_at", \.firstCountedAt, kind: .time),
      .integer("received_at", \.receivedAt, kind: .time),
    ] + StoredColumn.context(\.context)

  public static let blank = StoredCounter(
    app: "", counterID: "", deviceID: "", name: "", count: 0, firstCountedAt: 0, receivedAt: 0,
    context: EventContext())
}
