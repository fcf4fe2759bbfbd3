import CollectorWire

/// One stored column of an event: its name, the kind of value every engine maps to its own type,
/// and how an event's value is read from it and written to it.
public struct EventColumn: Sendable {
  /// The kinds of value a column holds; each engine picks its own type for each.
  public enum Kind: Sendable, Hashable {
    /// Text.
    case text
    /// A 64-bit integer.
    case integer
    /// A time, as milliseconds since 1970 (UTC) to and from the store.
    case time
    /// A JSON object, as text to and from the store.
    case json
  }

  /// The column's name in every engine.
  public let name: String
  /// The kind of value.
  public let kind: Kind
  /// Whether it may be `NULL`.
  public let isNullable: Bool
  /// The column's value for an event.
  public let value: @Sendable (StoredEvent) -> SQLValue
  /// Sets an event's field from the column's value.
  let assign: @Sendable (inout StoredEvent, SQLValue) -> Void

  static func text(_ name: String, _ field: any WritableKeyPath<StoredEvent, String> & Sendable) -> Self {
    Self(
      name: name, kind: .text, isNullable: false, value: { .text($0[keyPath: field]) },
      assign: { $0[keyPath: field] = $1.text ?? "" })
  }

  static func optionalText(_ name: String, _ field: any WritableKeyPath<StoredEvent, String?> & Sendable) -> Self {
    Self(
      name: name, kind: .text, isNullable: true, value: { $0[keyPath: field].map(SQLValue.text) ?? .null },
      assign: { $0[keyPath: field] = $1.text })
  }

  static func integer(
    _ name: String, _ field: any WritableKeyPath<StoredEvent, Int64> & Sendable, kind: Kind = .integer
  ) -> Self {
    Self(
      name: name, kind: kind, isNullable: false, value: { .int($0[keyPath: field]) },
      assign: { $0[keyPath: field] = $1.int ?? 0 })
  }

  static func optionalInteger(_ name: String, _ field: any WritableKeyPath<StoredEvent, Int64?> & Sendable) -> Self {
    Self(
      name: name, kind: .integer, isNullable: true, value: { $0[keyPath: field].map(SQLValue.int) ?? .null },
      assign: { $0[keyPath: field] = $1.int })
  }
}

extension StoredEvent {
  /// The event's stored columns, in table order: the one declaration every engine's inserts, row
  /// readers and select lists derive from. The context's columns come from ``ContextField``.
  public static let columns: [EventColumn] =
    [
      .text("app", \.app), .text("event_id", \.eventID), .text("name", \.name), .text("kind", \.kind),
      .integer("occurred_at", \.occurredAt, kind: .time), .integer("utc_offset_minutes", \.utcOffset),
      .integer("received_at", \.receivedAt, kind: .time), .text("device_id", \.deviceID),
      .optionalText("user_id", \.userID), .optionalInteger("session_id", \.sessionID),
    ]
    + ContextField.allCases.map { field in
      EventColumn(
        name: field.column, kind: .text, isNullable: false, value: { .text($0.context[field]) },
        assign: { $0.context[field] = $1.text ?? "" })
    }
    + [
      EventColumn(
        name: "parameters", kind: .json, isNullable: false, value: { .text($0.parametersJSON) },
        assign: { $0.parametersJSON = $1.text ?? "{}" })
    ]

  /// The event whose columns hold `value(column)`, read by ``columns``.
  public init(reading value: (EventColumn) throws -> SQLValue) rethrows {
    self.init(
      app: "", eventID: "", name: "", kind: "", occurredAt: 0, utcOffsetMinutes: 0, receivedAt: 0, deviceID: "",
      userID: nil, sessionID: nil, context: EventContext(), parametersJSON: "{}")
    for column in Self.columns { column.assign(&self, try value(column)) }
  }

  private var utcOffset: Int64 {
    get { Int64(utcOffsetMinutes) }
    set { utcOffsetMinutes = Int(clamping: newValue) }
  }
}
