/// Decodes a flat struct of strings (``CollectorContext``) from a dictionary of its fields, through
/// the type's own `Decodable` conformance: the field names stay declared once, in the type, and
/// no JSON is written or parsed on the way (a batch's context is read on every request).
struct FieldsDecoder: Decoder {
  let fields: [String: String]
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(Container<Key>(fields: fields))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Self.unsupported([]) }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Self.unsupported([]) }

  static func unsupported(_ path: [any CodingKey]) -> DecodingError {
    DecodingError.typeMismatch(
      String.self, .init(codingPath: path, debugDescription: "only a flat struct of strings is supported"))
  }

  private struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [String: String]
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { fields.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { fields[key.stringValue] == nil }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
      guard let value = fields[key.stringValue] else {
        throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "is required"))
      }
      return value
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
      throw FieldsDecoder.unsupported([key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
      -> KeyedDecodingContainer<NestedKey>
    { throw FieldsDecoder.unsupported([key]) }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
      throw FieldsDecoder.unsupported([key])
    }

    func superDecoder() throws -> any Decoder { throw FieldsDecoder.unsupported([]) }

    func superDecoder(forKey key: Key) throws -> any Decoder { throw FieldsDecoder.unsupported([key]) }
  }
}
