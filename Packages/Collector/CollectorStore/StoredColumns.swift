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

  // Fields are read and written by closures, not key paths: an insert reads every column of every
  // row, and applying a key path cost five times a closure call (measured in a debug build).

  static func text(
    _ name: String, kind: StoredColumnKind = .text, _ get: @escaping @Sendable (Row) -> String,
    _ set: @escaping @Sendable (inout Row, String) -> Void
  ) -> Self {
    Self(
      name: name, kind: kind, isNullable: false, value: { .text(get($0)) },
      assign: { set(&$0, $1.text ?? (kind == .json ? "{}" : "")) })
  }

  static func optionalText(
    _ name: String, _ get: @escaping @Sendable (Row) -> String?, _ set: @escaping @Sendable (inout Row, String?) -> Void
  ) -> Self {
    Self(
      name: name, kind: .text, isNullable: true, value: { get($0).map(SQLValue.text) ?? .null },
      assign: { set(&$0, $1.text) })
  }

  static func integer(
    _ name: String, kind: StoredColumnKind = .integer, _ get: @escaping @Sendable (Row) -> Int64,
    _ set: @escaping @Sendable (inout Row, Int64) -> Void
  ) -> Self {
    Self(name: name, kind: kind, isNullable: false, value: { .int(get($0)) }, assign: { set(&$0, $1.int ?? 0) })
  }

  static func optionalInteger(
    _ name: String, _ get: @escaping @Sendable (Row) -> Int64?, _ set: @escaping @Sendable (inout Row, Int64?) -> Void
  ) -> Self {
    Self(
      name: name, kind: .integer, isNullable: true, value: { get($0).map(SQLValue.int) ?? .null },
      assign: { set(&$0, $1.int) })
  }

  /// The context's columns, one per ``ContextField``.
  static func context(
    _ get: @escaping @Sendable (Row) -> EventContext,
    _ set: @escaping @Sendable (inout Row, ContextField, String) -> Void
  ) -> [Self] {
    ContextField.allCases.map { field in
      let read = EventContext.reader(of: field)
      return Self(
        name: field.column, kind: .text, isNullable: false, value: { .text(read(get($0))) },
        assign: { set(&$0, field, $1.text ?? "") })
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
      .text("app", { $0.app }, { $0.app = $1 }),
      .text("event_id", { $0.eventID }, { $0.eventID = $1 }),
      .text("name", { $0.name }, { $0.name = $1 }),
      .text("kind", { $0.kind }, { $0.kind = $1 }),
      .integer("occurred_at", kind: .time, { $0.occurredAt }, { $0.occurredAt = $1 }),
      .integer("utc_offset_minutes", { Int64($0.utcOffsetMinutes) }, { $0.utcOffsetMinutes = Int(clamping: $1) }),
      .integer("received_at", kind: .time, { $0.receivedAt }, { $0.receivedAt = $1 }),
      .text("device_id", { $0.deviceID }, { $0.deviceID = $1 }),
      .optionalText("user_id", { $0.userID }, { $0.userID = $1 }),
      .optionalInteger("session_id", { $0.sessionID }, { $0.sessionID = $1 }),
    ]
    + StoredColumn.context({ $0.context }, { $0.context[$1] = $2 })
    + [.text("parameters", kind: .json, { $0.parametersJSON }, { $0.parametersJSON = $1 })]

  public static let blank = StoredEvent(
    app: "", eventID: "", name: "", kind: "", occurredAt: 0, utcOffsetMinutes: 0, receivedAt: 0, deviceID: "",
    userID: nil, sessionID: nil, context: EventContext(), parametersJSON: "{}")
}

extension StoredCounter: StoredRow {
  public static let columns: [StoredColumn<Self>] =
    [
      .text("app", { $0.app }, { $0.app = $1 }),
      .text("counter_id", { $0.counterID }, { $0.counterID = $1 }),
      .text("device_id", { $0.deviceID }, { $0.deviceID = $1 }),
      .text("name", { $0.name }, { $0.name = $1 }),
      .integer("count", { $0.count }, { $0.count = $1 }),
      .integer("first_counted_at", kind: .time, { $0.firstCountedAt }, { $0.firstCountedAt = $1 }),
      .integer("received_at", kind: .time, { $0.receivedAt }, { $0.receivedAt = $1 }),
    ] + StoredColumn.context({ $0.context }, { $0.context[$1] = $2 })

  public static let blank = StoredCounter(
    app: "", counterID: "", deviceID: "", name: "", count: 0, firstCountedAt: 0, receivedAt: 0,
    context: EventContext())
}
