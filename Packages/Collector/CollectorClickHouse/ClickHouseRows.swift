import CollectorStore
import Foundation
import NIOCore

/// Rows to and from ClickHouse: `JSONEachRow` lines for inserts (values as JSON, never as SQL
/// text), `JSONCompact` rows for reads.
enum ClickHouseRows {
  static let contextColumns =
    "app_name, app_version, app_build, os_name, os_version, platform, device_model, locale, library"
  static let eventColumns =
    "app, event_id, name, kind, occurred_at, utc_offset_minutes, received_at, device_id, user_id, session_id, "
    + contextColumns + ", parameters"
  /// The event columns an insert writes (the report columns derived from the parameters too).
  static let insertedEventColumns = eventColumns + ", param_keys, param_values"
  static let counterColumns =
    "app, counter_id, device_id, name, count, first_counted_at, received_at, " + contextColumns
  static let keyColumns = "id, app, scope, hash, created_at, revoked_at"

  /// One `JSONEachRow` line per event, with its top-level parameters from `facts`.
  static func body(_ events: [StoredEvent], _ facts: ClickHouseFacts) throws -> ByteBuffer {
    try lines(events) { event in
      var row: [String: Any] = [
        "app": event.app, "event_id": event.eventID, "name": event.name, "kind": event.kind,
        "occurred_at": event.occurredAt, "utc_offset_minutes": event.utcOffsetMinutes, "received_at": event.receivedAt,
        "device_id": event.deviceID, "user_id": event.userID ?? NSNull(),
        "session_id": event.sessionID.map { $0 as Any } ?? NSNull(), "parameters": event.parametersJSON,
      ]
      context(event.context, into: &row)
      let parameters = facts.parameters[event.eventID]
      row["param_keys"] = parameters?.keys ?? []
      row["param_values"] = parameters?.values ?? []
      return row
    }
  }

  /// One `JSONEachRow` line per row of named values.
  static func body(_ rows: [[String: Any]]) throws -> ByteBuffer { try lines(rows) { $0 } }

  /// The columns of `rows` (every row has the same keys).
  static func columns(_ rows: [[String: Any]]) -> String { rows.first?.keys.sorted().joined(separator: ", ") ?? "" }

  /// One `JSONEachRow` line per counter.
  static func body(_ counters: [StoredCounter]) throws -> ByteBuffer {
    try lines(counters) { counter in
      var row: [String: Any] = [
        "app": counter.app, "counter_id": counter.counterID, "device_id": counter.deviceID, "name": counter.name,
        "count": counter.count, "first_counted_at": counter.firstCountedAt, "received_at": counter.receivedAt,
      ]
      context(counter.context, into: &row)
      return row
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

  private static func context(_ context: StoredContext, into row: inout [String: Any]) {
    row["app_name"] = context.appName
    row["app_version"] = context.appVersion
    row["app_build"] = context.appBuild
    row["os_name"] = context.osName
    row["os_version"] = context.osVersion
    row["platform"] = context.platform
    row["device_model"] = context.deviceModel
    row["locale"] = context.locale
    row["library"] = context.library
  }

  private static func lines<Row>(_ rows: [Row], _ fields: (Row) -> [String: Any]) throws -> ByteBuffer {
    var buffer = ByteBuffer()
    for row in rows {
      buffer.writeBytes(try JSONSerialization.data(withJSONObject: fields(row), options: [.withoutEscapingSlashes]))
      buffer.writeInteger(UInt8(ascii: "\n"))
    }
    return buffer
  }

  static func context(_ row: SQLRow) -> StoredContext {
    StoredContext(
      appName: row["app_name"].text ?? "", appVersion: row["app_version"].text ?? "",
      appBuild: row["app_build"].text ?? "", osName: row["os_name"].text ?? "", osVersion: row["os_version"].text ?? "",
      platform: row["platform"].text ?? "", deviceModel: row["device_model"].text ?? "",
      locale: row["locale"].text ?? "", library: row["library"].text ?? "")
  }

  static func event(_ row: SQLRow) -> StoredEvent {
    StoredEvent(
      app: row["app"].text ?? "", eventID: row["event_id"].text ?? "", name: row["name"].text ?? "",
      kind: row["kind"].text ?? "", occurredAt: row["occurred_at"].int ?? 0,
      utcOffsetMinutes: Int(row["utc_offset_minutes"].int ?? 0), receivedAt: row["received_at"].int ?? 0,
      deviceID: row["device_id"].text ?? "", userID: row["user_id"].text, sessionID: row["session_id"].int,
      context: context(row), parametersJSON: row["parameters"].text ?? "{}")
  }

  static func counter(_ row: SQLRow) -> StoredCounter {
    StoredCounter(
      app: row["app"].text ?? "", counterID: row["counter_id"].text ?? "", deviceID: row["device_id"].text ?? "",
      name: row["name"].text ?? "", count: row["count"].int ?? 0, firstCountedAt: row["first_counted_at"].int ?? 0,
      receivedAt: row["received_at"].int ?? 0, context: context(row))
  }

  static func key(_ row: SQLRow) -> KeyRecord? {
    guard let scope = KeyRecord.Scope(rawValue: row["scope"].text ?? "") else { return nil }
    return KeyRecord(
      id: row["id"].text ?? "", app: row["app"].text ?? "", scope: scope, hash: row["hash"].text ?? "",
      createdAt: row["created_at"].int ?? 0, revokedAt: row["revoked_at"].int)
  }
}
