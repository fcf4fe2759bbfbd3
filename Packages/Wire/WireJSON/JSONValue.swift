/// Any JSON value, with objects' keys in the order they were written and integers kept exact: the
/// one JSON value type of the wire modules. The collector's parser produces it, event parameters
/// are made of it on the way in, stores read it back, and report answers write it in its order.
///
/// ```swift
/// let item: JSONValue = .object(["item_id": .string("SKU-1"), "price": .double(9.99)])
/// item["price"]?.amount  // 9.99
/// ```
///
/// Not `indirect`: its lists and objects hold their values in arrays already, so no case needs a box
/// of its own; an `indirect` enum allocated one for every value, strings and numbers included (a
/// parameter's value cost a heap allocation, and retains wherever it was copied).
public enum JSONValue: Sendable, Hashable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number written without a fraction or exponent that fits 64 bits.
  case int(Int64)
  /// Any other number.
  case double(Double)
  /// A string.
  case string(String)
  /// A list, e.g. `"tags": ["summer", "sale"]`.
  case array([JSONValue])
  /// An object, e.g. one element of `items`; its keys in order.
  case object(JSONObject)

  /// The text, when this is a string.
  public var string: String? {
    if case .string(let text) = self { text } else { nil }
  }

  /// The number as an integer (a whole double under 9×10^18 counts), when this is one.
  public var integer: Int64? {
    switch self {
    case .int(let value): value
    case .double(let value) where value.rounded() == value && abs(value) < 9e18: Int64(value)
    default: nil
    }
  }

  /// A number under 10^15 in size as a double (what money and quantities may be), else `nil`.
  public var amount: Double? {
    switch self {
    case .int(let value) where value.magnitude < 1_000_000_000_000_000: Double(value)
    case .double(let value) where value.magnitude < 1e15: value
    default: nil
    }
  }

  /// The value of `key`, when this is an object holding it.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let object) = self else { return nil }
    return object[key]
  }

  /// What kind of value this is, as an error message names it: `a string`, `a number`, ...
  public var typeName: String {
    switch self {
    case .string: "a string"
    case .int, .double: "a number"
    case .bool: "a boolean"
    case .null: "null"
    case .array: "an array"
    case .object: "an object"
    }
  }

  /// The value as report text: a string as is, a number as written in JSON, `true`/`false`, a
  /// list or object as compact JSON; `nil` for `null`.
  public var text: String? {
    switch self {
    case .string(let text): return text
    case .null: return nil
    default: return String(decoding: json, as: UTF8.self)
    }
  }

  /// The value as compact JSON, keys in their order.
  public var json: [UInt8] {
    var writer = JSONWriter()
    write(to: &writer)
    return writer.bytes
  }

  /// Writes the value, keys in their order.
  public func write(to writer: inout JSONWriter) {
    switch self {
    case .null: writer.null()
    case .bool(let flag): writer.bool(flag)
    case .int(let value): writer.int(value)
    case .double(let value): writer.double(value)
    case .string(let text): writer.string(text)
    case .array(let values):
      writer.beginArray()
      for value in values { value.write(to: &writer) }
      writer.endArray()
    case .object(let object):
      writer.beginObject()
      for field in object.fields {
        writer.key(field.key)
        field.value.write(to: &writer)
      }
      writer.endObject()
    }
  }
}

/// One key of a JSON object and its value.
public struct JSONField: Sendable, Hashable {
  /// The key.
  public var key: String
  /// The value.
  public var value: JSONValue

  /// A field.
  public init(key: String, value: JSONValue) {
    self.key = key
    self.value = value
  }
}

/// A JSON object: its fields in order. Written as a dictionary literal, it keeps the literal's
/// order; setting a key that is there replaces its value in place, a new key goes last. Two objects
/// are equal when they hold the same fields in the same order.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
  /// The fields, in order. A parsed object may hold a key twice; the wire's rules refuse that.
  public var fields: [JSONField]

  /// An object with `fields`.
  public init(_ fields: [JSONField] = []) { self.fields = fields }

  /// An object with the literal's fields in its order.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    fields = elements.map { JSONField(key: $0.0, value: $0.1) }
  }

  /// The value of `key` (its first field), or `nil`; setting `nil` removes the key.
  public subscript(key: String) -> JSONValue? {
    get { fields.first { $0.key == key }?.value }
    set {
      let index = fields.firstIndex { $0.key == key }
      switch (index, newValue) {
      case (let index?, let value?): fields[index].value = value
      case (let index?, nil): fields.remove(at: index)
      case (nil, let value?): fields.append(JSONField(key: key, value: value))
      case (nil, nil): break
      }
    }
  }

  /// The keys, in order.
  public var keys: [String] { fields.map(\.key) }
  /// How many fields.
  public var count: Int { fields.count }
  /// Whether there are no fields.
  public var isEmpty: Bool { fields.isEmpty }

  /// The fields in order, as `(key, value)` pairs (as a dictionary's).
  public func makeIterator() -> Iterator { Iterator(fields: fields.makeIterator()) }

  /// Walks the fields in order.
  public struct Iterator: IteratorProtocol {
    var fields: IndexingIterator<[JSONField]>

    /// The next field.
    public mutating func next() -> (key: String, value: JSONValue)? {
      fields.next().map { ($0.key, $0.value) }
    }
  }
}
