import CollectorStore
import CollectorWire
import Foundation
import NIOCore

/// Rows to and from ClickHouse: `TabSeparated` rows for the bulk inserts (events and counters),
/// `JSONEachRow` lines for the rest (values as data, never as SQL text), `JSONCompact` rows for
/// reads.
enum ClickHouseRows {
  static let eventColumns = StoredEvent.columnNames
  /// The event columns an insert writes (the report columns derived from the parameters too).
  static let insertedEventColumns = eventColumns + ", param_keys, param_values"
  static let counterColumns = StoredCounter.columnNames
  static let keyColumns = "id, app, scope, hash, created_at, revoked_at"

  /// One `TabSeparated` row per event of `facts`, its columns in ``insertedEventColumns``' order,
  /// with its top-level parameters.
  static func body(_ facts: ClickHouseFacts) -> ByteBuffer {
    let events = facts.events
    // Straight into one buffer: the events are most of what a collector inserts (as `JSONEachRow`,
    // a writer per row, encoding took a third of a 50,000-event write).
    var rows = ClickHouseTabSeparated(capacity: events.reduce(0) { $0 + 300 + $1.parametersJSON.utf8.count * 2 })
    let columns = StoredEvent.columns
    for (event, parameters) in zip(events, facts.parameters) {
      rows.columns(columns, of: event)
      rows.array(parameters.keys)
      rows.array(parameters.values)
      rows.endRow()
    }
    return rows.buffer
  }

  static func body(_ rows: [[String: Any]]) throws -> ByteBuffer { try lines(rows) { $0 } }

  /// The columns of `rows` (every row has the same keys).
  static func columns(_ rows: [[String: Any]]) -> String { rows.first?.keys.sorted().joined(separator: ", ") ?? "" }

  /// One `TabSeparated` row per counter, its columns in ``counterColumns``' order.
  static func body(_ counters: [StoredCounter]) -> ByteBuffer {
    var rows = ClickHouseTabSeparated(capacity: counters.count * 300)
    let columns = StoredCounter.columns
    for counter in counters {
      rows.columns(columns, of: counter)
      rows.endRow()
    }
    return rows.buffer
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
