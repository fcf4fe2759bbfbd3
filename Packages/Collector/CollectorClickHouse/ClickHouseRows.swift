import CollectorStore
import CollectorWire
import Foundation
import NIOCore

/// Rows to and from ClickHouse: `JSONEachRow` lines for inserts (values as JSON, never as SQL
/// text), `JSONCompact` rows for reads.
enum ClickHouseRows {
  static let eventColumns = StoredEvent.columnNames
  /// The event columns an insert writes (the report columns derived from the parameters too).
  static let insertedEventColumns = eventColumns + ", param_keys, param_values"
  static let counterColumns = StoredCounter.columnNames
  static let keyColumns = "id, app, scope, hash, created_at, revoked_at"

  /// One `JSONEachRow` line per event, with its top-level parameters from `facts`.
  static func body(_ events: [StoredEvent], _ facts: ClickHouseFacts) -> ByteBuffer {
    // The fast writer the wire formats use: the events are most of what a collector inserts
    // (JSONSerialization of a dictionary per row took most of a write's time).
    var buffer = ByteBuffer()
    for event in events {
      var json = JSONWriter(capacity: 400 + event.parametersJSON.utf8.count * 2)
      json.beginObject()
      columns(of: event, into: &json)
      let parameters = facts.parameters[event.eventID]
      for (key, list) in [("param_keys", parameters?.keys ?? []), ("param_values", parameters?.values ?? [])] {
        json.key(key)
        json.beginArray()
        for item in list { json.string(item) }
        json.endArray()
      }
      json.endObject()
      buffer.writeBytes(json.bytes)
      buffer.writeInteger(UInt8(ascii: "\n"))
    }
    return buffer
  }

  static func body(_ rows: [[String: Any]]) throws -> ByteBuffer { try lines(rows) { $0 } }

  /// The columns of `rows` (every row has the same keys).
  static func columns(_ rows: [[String: Any]]) -> String { rows.first?.keys.sorted().joined(separator: ", ") ?? "" }

  /// One `JSONEachRow` line per counter.
  static func body(_ counters: [StoredCounter]) -> ByteBuffer {
    var buffer = ByteBuffer()
    for counter in counters {
      var json = JSONWriter(capacity: 400)
      json.beginObject()
      columns(of: counter, into: &json)
      json.endObject()
      buffer.writeBytes(json.bytes)
      buffer.writeInteger(UInt8(ascii: "\n"))
    }
    return buffer
  }

  /// A row's declared columns (``StoredRow/columns``) as the members of a `JSONEachRow` object.
  private static func columns<Row: StoredRow>(of row: Row, into json: inout JSONWriter) {
    for column in Row.columns {
      json.key(column.name)
      switch column.value(row) {
      case .text(let text): json.string(text)
      case .int(let number): json.int(number)
      case .double(let number): json.double(number)
      case .null: json.null()
      }
    }
  }

  /// One `JSONEachRow` line for a key at `version`.
  static func body(_ key: KeyRecord, version: Int64) throws -> ByteBuffer {
    try lines([key]) { key in
      [
        "id": key.id, "app": key.app, "scope": key.scope.rawValue, "hash": key.hash, "created_at": key.createdAt,
        "revoked_at": key.revokedAt.map { $0 as Any } ?? NSNull(), "version": version,
      ]
    }
  }

  private static func lines<Row>(_ rows: [Row], _ fields: (Row) -> [String: Any]) throws -> ByteBuffer {
    var buffer = ByteBuffer()
    for row in rows {
      buffer.writeBytes(try JSONSerialization.data(withJSONObject: fields(row), options: [.withoutEscapingSlashes]))
      buffer.writeInteger(UInt8(ascii: "\n"))
    }
    return buffer
  }

  static func event(_ row: SQLRow) -> StoredEvent {
    StoredEvent { row[$0.name] }
  }

  static func counter(_ row: SQLRow) -> StoredCounter {
    StoredCounter { row[$0.name] }
  }

  static func key(_ row: SQLRow) -> KeyRecord? {
    guard let scope = KeyRecord.Scope(rawValue: row["scope"].text ?? "") else { return nil }
    return KeyRecord(
      id: row["id"].text ?? "", app: row["app"].text ?? "", scope: scope, hash: row["hash"].text ?? "",
      createdAt: row["created_at"].int ?? 0, revokedAt: row["revoked_at"].int)
  }
}
