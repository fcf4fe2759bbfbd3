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
  }

  /// The fields of `json` when it is a JSON object, in their order; `nil` when it is not.
  public static func parse(_ json: String) -> [Field]? {
    guard let document = try? Parser.document(Array(json.utf8), named: "the parameters"),
      case .object(let fields) = Value(document)
    else { return nil }
    return fields
  }
}
