/// Encodes an `Encodable` value as compact JSON with every object's keys in the order they were
/// encoded: a struct's in declaration order, a ``JSONObject``'s in its own. `JSONEncoder` gives
/// them in hash order unless told to sort them, which loses the order an event's parameters were
/// tracked in; report answers are written with this instead.
///
/// Types encode themselves (a `Date` as its reference-date seconds, as `JSONEncoder`'s default);
/// there are no key or date strategies. Slashes are not escaped; a non-finite number is `null`.
public struct OrderedJSONEncoder: Sendable {
  /// An encoder.
  public init() {}

  /// `value` as JSON bytes.
  public func encode(_ value: some Encodable) throws -> [UInt8] { try JSONValue(encoding: value).json }
}

extension JSONValue {
  /// The JSON that `value` encodes to, keys in encoding order.
  public init(encoding value: some Encodable) throws {
    let node = EncodingNode()
    try value.encode(to: NodeEncoder(node: node, codingPath: []))
    self = node.value
  }
}

/// What one encoded value is while it is being built.
private final class EncodingNode {
  enum Kind { case empty, value, object, array }

  var kind = Kind.empty
  var single = JSONValue.null
  var fields: [(String, EncodingNode)] = []
  var elements: [EncodingNode] = []

  var value: JSONValue {
    switch kind {
    case .empty: .object(JSONObject())
    case .value: single
    case .object: .object(JSONObject(fields.map { JSONField(key: $0.0, value: $0.1.value) }))
    case .array: .array(elements.map(\.value))
    }
  }

  func set(_ value: JSONValue) {
    kind = .value
    single = value
  }

  /// A new child under `key`, replacing one encoded under it before.
  func child(forKey key: String) -> EncodingNode {
    makeObject()
    let node = EncodingNode()
    if let index = fields.firstIndex(where: { $0.0 == key }) {
      fields[index].1 = node
    } else {
      fields.append((key, node))
    }
    return node
  }

  /// A new child at the end of the list.
  func appendedChild() -> EncodingNode {
    makeArray()
    let node = EncodingNode()
    elements.append(node)
    return node
  }

  func makeObject() { if kind != .object { (kind, fields) = (.object, []) } }
  func makeArray() { if kind != .array { (kind, elements) = (.array, []) } }
}

private struct NodeEncoder: Encoder {
  let node: EncodingNode
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    node.makeObject()
    return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    node.makeArray()
    return UnkeyedNodeContainer(node: node, codingPath: codingPath)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    SingleNodeContainer(node: node, codingPath: codingPath)
  }
}

private struct IndexKey: CodingKey {
  var intValue: Int?
  var stringValue: String { "\(intValue ?? 0)" }
  init(intValue: Int) { self.intValue = intValue }
  init?(stringValue: String) { nil }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let node: EncodingNode
  let codingPath: [any CodingKey]

  mutating func encodeNil(forKey key: Key) throws { node.child(forKey: key.stringValue).set(.null) }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    try value.encode(to: NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
    -> KeyedEncodingContainer<NestedKey>
  {
    NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
  }

  mutating func superEncoder() -> any Encoder {
    NodeEncoder(node: node.child(forKey: "super"), codingPath: codingPath)
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
  }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
  let node: EncodingNode
  let codingPath: [any CodingKey]
  var count: Int {
    node.elements.count
  }

  private var nextPath: [any CodingKey] { codingPath + [IndexKey(intValue: count)] }

  mutating func encodeNil() throws { node.appendedChild().set(.null) }

  mutating func encode<T: Encodable>(_ value: T) throws {
    let path = nextPath
    try value.encode(to: NodeEncoder(node: node.appendedChild(), codingPath: path))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    let path = nextPath
    return NodeEncoder(node: node.appendedChild(), codingPath: path).container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let path = nextPath
    return NodeEncoder(node: node.appendedChild(), codingPath: path).unkeyedContainer()
  }

  mutating func superEncoder() -> any Encoder {
    let path = nextPath
    return NodeEncoder(node: node.appendedChild(), codingPath: path)
  }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
  let node: EncodingNode
  let codingPath: [any CodingKey]

  mutating func encodeNil() throws { node.set(.null) }
  mutating func encode(_ value: Bool) throws { node.set(.bool(value)) }
  mutating func encode(_ value: String) throws { node.set(.string(value)) }
  mutating func encode(_ value: Double) throws { node.set(.double(value)) }
  mutating func encode(_ value: Float) throws { node.set(.double(Double(value))) }
  mutating func encode(_ value: Int) throws { node.set(.int(Int64(value))) }
  mutating func encode(_ value: Int8) throws { node.set(.int(Int64(value))) }
  mutating func encode(_ value: Int16) throws { node.set(.int(Int64(value))) }
  mutating func encode(_ value: Int32) throws { node.set(.int(Int64(value))) }
  mutating func encode(_ value: Int64) throws { node.set(.int(value)) }
  mutating func encode(_ value: UInt) throws { try encode(UInt64(value)) }
  mutating func encode(_ value: UInt8) throws { node.set(.int(Int64(value))) }
  mutating func encode(_ value: UInt16) throws { node.set(.int(Int64(value))) }
  mutating func encode(_ value: UInt32) throws { node.set(.int(Int64(value))) }
  mutating func encode(_ value: UInt64) throws {
    node.set(Int64(exactly: value).map(JSONValue.int) ?? .double(Double(value)))
  }

  mutating func encode<T: Encodable>(_ value: T) throws {
    try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
  }
}
