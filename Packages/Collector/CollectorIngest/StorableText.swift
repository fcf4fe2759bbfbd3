public import CollectorStore
import CollectorWire

/// Text every engine can store: PostgreSQL refuses U+0000 in `text` and `jsonb`, so one event with a
/// NUL would fail the whole group commit (a 503 for every request in it, retried forever). Every
/// ingest path checks its rows here and rejects the event alone, naming the field.
extension StoredEvent {
  /// The first field holding U+0000, or `nil` when every field can be stored.
  public var fieldWithNUL: String? {
    let fields = [("id", eventID), ("name", name), ("kind", kind), ("deviceId", deviceID), ("userId", userID ?? "")]
    for (field, text) in fields where text.utf8.contains(0) { return field }
    for (field, text) in context.fields where text.utf8.contains(0) { return "context.\(field.rawValue)" }
    return StorableText.jsonHasNUL(parametersJSON) ? "parameters" : nil
  }
}

enum StorableText {
  /// Whether JSON text written by `JSONWriter` holds an escaped NUL (`\u0000`), read escape by escape
  /// (an escaped backslash followed by `u0000` is not one).
  static func jsonHasNUL(_ json: String) -> Bool {
    let bytes = Array(json.utf8)
    var index = 0
    while index < bytes.count {
      if bytes[index] == 0 { return true }
      guard bytes[index] == UInt8(ascii: "\\") else {
        index += 1
        continue
      }
      if index + 5 < bytes.count, bytes[index + 1] == UInt8(ascii: "u"),
        bytes[(index + 2)...(index + 5)].allSatisfy({ $0 == UInt8(ascii: "0") })
      {
        return true
      }
      index += 2
    }
    return false
  }
}
