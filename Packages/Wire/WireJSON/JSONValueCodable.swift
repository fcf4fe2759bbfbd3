/// A JSON value through `Codable`: encoded as the JSON it is (keys in order; ``OrderedJSONEncoder``
/// keeps that order, `JSONEncoder` does not), decoded from any JSON. `Decoder` does not give an
/// object's keys in their order, so a decoded object's keys are sorted; the collector's own parser
/// keeps the order.
extension JSONValue: Codable {
  public func encode(to encoder: any Encoder) throws {
    switch self {
    case .object(let object):
      var container = encoder.container(keyedBy: JSONKey.self)
      for field in object.fields { try container.encode(field.value, forKey: JSONKey(stringValue: field.key)) }
    case .array(let values):
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

  // Scalars are tried first, in the order the old per-route value types did: each failed attempt
  // throws, and most values are strings and numbers (the `JSONDecoder` ceiling the ingest
  // benchmarks compare against depends on it).
  public init(from decoder: any Decoder) throws {
    let single = try decoder.singleValueContainer()
    if single.decodeNil() {
      self = .null
    } else if let flag = try? single.decode(Bool.self) {
      self = .bool(flag)
    } else if let value = try? single.decode(Int64.self) {
      self = .int(value)
    } else if let value = try? single.decode(Double.self) {
      self = .double(value)
    } else if let text = try? single.decode(String.self) {
      self = .string(text)
    } else if var container = try? decoder.unkeyedContainer() {
      var values: [Self] = []
      while !container.isAtEnd { values.append(try container.decode(Self.self)) }
      self = .array(values)
    } else {
      self = .object(try JSONObject(from: decoder))
    }
  }
}

/// An object through `Codable`: as ``JSONValue/object(_:)``, its keys sorted when decoded.
extension JSONObject: Codable {
  public func encode(to encoder: any Encoder) throws { try JSONValue.object(self).encode(to: encoder) }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: JSONKey.self)
    self.init(
      try container.allKeys.sorted { $0.stringValue < $1.stringValue }.map { key in
        JSONField(key: key.stringValue, value: try container.decode(JSONValue.self, forKey: key))
      })
  }
}

/// An object's key, whatever its text: the coding key of ``JSONValue`` and ``JSONObject``.
private struct JSONKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}
