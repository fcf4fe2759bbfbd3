public import WireJSON

/// A JSON body read by the collector's own parser (exact numbers, keys in order with duplicates
/// kept, nesting bounded by ``BatchDecoder/maximumDepth``), for routes whose format is not the
/// native batch.
public enum JSONDocument {
  /// The one value `bytes` holds, or the error naming where it breaks JSON.
  public static func parse(_ bytes: [UInt8]) throws(FieldError) -> JSONValue {
    try Parser.document(bytes, named: "the body")
  }

  /// The first top-level member of the object `bytes` whose key is one of `keys`, read member by
  /// member and stopping there (so telling two formats apart by their first distinguishing key costs
  /// the members before it, not the body); `nil` when there is none or the body is not an object.
  public static func firstKey(of bytes: [UInt8], among keys: Set<String>) -> String? {
    bytes.withUnsafeBufferPointer { buffer -> String? in
      var parser = Parser(buffer)
      parser.skipWhitespace()
      guard !parser.isAtEnd, buffer[parser.position] == UInt8(ascii: "{") else { return nil }
      parser.position += 1
      while true {
        parser.skipWhitespace()
        guard !parser.isAtEnd, buffer[parser.position] == UInt8(ascii: "\""),
          let key = try? parser.string(field: "")
        else { return nil }
        if keys.contains(key) { return key }
        parser.skipWhitespace()
        guard !parser.isAtEnd, buffer[parser.position] == UInt8(ascii: ":") else { return nil }
        parser.position += 1
        guard (try? parser.value(field: "", depth: 1)) != nil else { return nil }
        parser.skipWhitespace()
        guard !parser.isAtEnd, buffer[parser.position] == UInt8(ascii: ",") else { return nil }
        parser.position += 1
      }
    }
  }
}
