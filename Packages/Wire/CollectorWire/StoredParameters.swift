import WireJSON

/// An event's stored parameters read back: the JSON object the collector keeps them as, parsed by
/// the collector's own JSON grammar (exact integers, keys in order). Engines that keep parameters
/// as typed columns beside the JSON (ClickHouse) read them with this.
public enum StoredParameters {
  /// One JSON value.
  public indirect enum Value: Sendable, Hashable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null
    case list([Value])
    case object([Field])

    /// A number under 10^15 in size as a double (what money and quantities may be), else `nil`.
    public var amount: Double? {
      switch self {
      case .int(let value) where value.magnitude < 1_000_000_000_000_000: Double(value)
      case .double(let value) where value.magnitude < 1e15: value
      default: nil
      }
    }

    /// The text, when this is a string.
    public var string: String? {
      if case .string(let text) = self { text } else { nil }
    }

    /// The value of `key`, when this is an object holding it.
    public subscript(key: String) -> Value? {
      guard case .object(let fields) = self else { return nil }
      return fields.first { $0.key == key }?.value
    }

    /// The value as report text: a string as is, a number as written in JSON, `true`/`false`, a
    /// list or object as compact JSON; `nil` for `null`.
    public var text: String? {
      switch self {
      case .string(let text): return text
      case .null: return nil
      default:
        var writer = JSONWriter()
        write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
      }
    }

    func write(to writer: inout JSONWriter) {
      switch self {
      case .string(let text): writer.string(text)
      case .int(let value): writer.int(value)
      case .double(let value): writer.double(value)
      case .bool(let flag): writer.bool(flag)
      case .null: writer.null()
      case .list(let values):
        writer.beginArray()
        for value in values { value.write(to: &writer) }
        writer.endArray()
      case .object(let fields):
        writer.beginObject()
        for field in fields {
          writer.key(field.key)
          field.value.write(to: &writer)
        }
        writer.endObject()
      }
    }

    init(_ json: JSONValue) {
      switch json {
      case .string(let text): self = .string(text)
      case .int(let value): self = .int(value)
      case .double(let value): self = .double(value)
      case .bool(let flag): self = .bool(flag)
      case .null: self = .null
      case .array(let values): self = .list(values.map(Value.init))
      case .object(let pairs): self = .object(pairs.map { Field(key: $0.0, value: Value($0.1)) })
      }
    }
  }

  /// One key of an object and its value.
  public struct Field: Sendable, Hashable {
    /// The key.
    public var key: String
    /// The value.
    public var value: Value

    /// A field.
    public init(key: String, value: Value) {
      self.key = key
      self.value = value
    }
  }

  /// The fields of `json` when it is a JSON object, in their order; `nil` when it is not.
  public static func parse(_ json: String) -> [Field]? {
    guard let document = try? Parser.document(Array(json.utf8), named: "the parameters"),
      case .object(let fields) = Value(document)
    else { return nil }
    return fields
  }
}

/// An event's parameters in a report answer: a JSON object, not a string holding one. Keys are
/// written in their stored order and read back sorted, so an answer decodes to the value it was made from.
extension StoredParameters.Value: Codable {
  private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  public func encode(to encoder: any Encoder) throws {
    switch self {
    case .object(let fields):
      var container = encoder.container(keyedBy: Key.self)
      for field in fields { try container.encode(field.value, forKey: Key(stringValue: field.key)) }
    case .list(let values):
      var container = encoder.unkeyedContainer()
      for value in values { try container.encode(value) }
    case .string(let text): try Self.single(encoder) { try $0.encode(text) }
    case .int(let value): try Self.single(encoder) { try $0.encode(value) }
    case .double(let value): try Self.single(encoder) { try $0.encode(value) }
    case .bool(let flag): try Self.single(encoder) { try $0.encode(flag) }
    case .null: try Self.single(encoder) { try $0.encodeNil() }
    }
  }

  private static func single(_ encoder: any Encoder, _ write: (inout any SingleValueEncodingContainer) throws -> Void)
    throws
  {
    var container = encoder.singleValueContainer()
    try write(&container)
  }

  public init(from decoder: any Decoder) throws {
    if let container = try? decoder.container(keyedBy: Key.self) {
      self = .object(
        try container.allKeys.sorted { $0.stringValue < $1.stringValue }.map { key in
          StoredParameters.Field(key: key.stringValue, value: try container.decode(Self.self, forKey: key))
        })
    } else if var container = try? decoder.unkeyedContainer() {
      var values: [Self] = []
      while !container.isAtEnd { values.append(try container.decode(Self.self)) }
      self = .list(values)
    } else {
      let container = try decoder.singleValueContainer()
      if container.decodeNil() {
        self = .null
      } else if let flag = try? container.decode(Bool.self) {
        self = .bool(flag)
      } else if let value = try? container.decode(Int64.self) {
        self = .int(value)
      } else if let value = try? container.decode(Double.self) {
        self = .double(value)
      } else {
        self = .string(try container.decode(String.self))
      }
    }
  }

  /// The parameters of `json` (a stored parameters object) with their keys sorted, at every depth:
  /// how report answers carry them. Text that is not a JSON object is an empty object.
  public static func reported(_ json: String) -> Self {
    Self.object(StoredParameters.parse(json) ?? []).sorted
  }

  private var sorted: Self {
    switch self {
    case .object(let fields):
      .object(fields.map { StoredParameters.Field(key: $0.key, value: $0.value.sorted) }.sorted { $0.key < $1.key })
    case .list(let values): .list(values.map(\.sorted))
    default: self
    }
  }
}
