/// One field of an event's context.
///
/// This enum is the one declaration of the context: the wire's JSON keys (the raw values), the
/// store's columns (``column``), the batch decoder's checks, the collector's validation and every
/// engine's inserts and row readers derive from its cases. Adding a case adds the field everywhere;
/// the one place that must say what it holds on the client (`CollectorService`'s mapping of the
/// tracker's context) is an exhaustive `switch`, so forgetting it is a compile error.
public enum ContextField: String, CaseIterable, Sendable, Hashable, CodingKey {
  /// The app's name.
  case appName
  /// The app's version (SimpleAnalytics: the build number).
  case appVersion
  /// The app's build number.
  case appBuild
  /// The operating system's name.
  case osName
  /// The operating system's version.
  case osVersion
  /// The platform, e.g. `iOS` or `iOS (iPhone)`.
  case platform
  /// The device model, where known.
  case deviceModel
  /// The locale identifier.
  case locale
  /// The time zone identifier (the original UTC offset of each event is in the event).
  case timeZone
  /// The tracking library's name.
  case libraryName
  /// The tracking library's version.
  case libraryVersion
  /// The build's environment (`development`, `internal`, `production` or a name of the app's):
  /// empty means `production` (``AppEnvironment``).
  case environment

  /// The field's column in every store: the wire name in snake case (`appName` → `app_name`).
  public var column: String { Self.columnNames[position] }

  /// The field's place in ``allCases``.
  var position: Int { Self.positions[self]! }

  private static let positions = Dictionary(uniqueKeysWithValues: allCases.enumerated().map { ($1, $0) })
  private static let columnNames = allCases.map { field in
    field.rawValue.unicodeScalars.reduce(into: "") { column, scalar in
      if ("A"..."Z").contains(scalar) {
        column += "_" + String(scalar).lowercased()
      } else {
        column.unicodeScalars.append(scalar)
      }
    }
  }

  /// Every field's column, in declaration order.
  public static let columns: [String] = allCases.map(\.column)

  /// The fields a client may leave out of a batch: those added after clients shipped (absent, they
  /// are empty). Every other field is required, so a client that forgets one is told which; a field
  /// added later goes here, or every client built before it would have its batches refused.
  public static let addedLater: Set<ContextField> = [.environment]
}

/// Where an event comes from: app, OS, device, locale, time zone and library.
///
/// The one context type of the wire, the collector and its stores: the native batch is decoded
/// straight into it, every ingest route builds it, and every engine stores and reads it field by
/// field from ``ContextField``. Every field is text, empty when unknown.
public struct EventContext: Sendable, Hashable {
  private var values: [String]

  /// A context with every field empty.
  public init() { values = Array(repeating: "", count: ContextField.allCases.count) }

  /// A context with the given fields; the others empty.
  public init(_ fields: [ContextField: String]) {
    self.init()
    for (field, value) in fields { self[field] = value }
  }

  /// A context with each field's value from `value`.
  public init(_ value: (ContextField) throws -> String) rethrows {
    values = try ContextField.allCases.map(value)
  }

  /// One field's value.
  public subscript(field: ContextField) -> String {
    get { values[field.position] }
    set { values[field.position] = newValue }
  }

  /// Every field with its value, in declaration order.
  public var fields: [(field: ContextField, value: String)] {
    ContextField.allCases.map { ($0, values[$0.position]) }
  }

  /// What reads `field` of a context, its place looked up once: the subscript looks it up in a
  /// dictionary at every read, which a writer of every row's every column should not (3–6% of the
  /// collector's time in a ClickHouse load, Docs/Benchmarks.md).
  package static func reader(of field: ContextField) -> @Sendable (EventContext) -> String {
    let position = field.position
    return { $0.values[position] }
  }
}

extension EventContext: Codable {
  /// Decodes every field; a missing one is an error unless it is one of ``ContextField/addedLater``.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: ContextField.self)
    try self.init { field in
      if ContextField.addedLater.contains(field) {
        return try container.decodeIfPresent(String.self, forKey: field) ?? ""
      }
      return try container.decode(String.self, forKey: field)
    }
  }

  /// Encodes every field, in declaration order.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: ContextField.self)
    for (field, value) in fields { try container.encode(value, forKey: field) }
  }
}
