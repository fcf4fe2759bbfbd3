public import CollectorStore
import Foundation

/// Dashboard sessions and the audit trail on ClickHouse (migration 3).
///
/// A session is rewritten, never updated: each use writes a row whose `version` is the time of the
/// use, and ending it writes one whose `version` is above every time (``endedVersion``), so a late
/// use never revives an ended session. Reads take the newest version with `FINAL`.
extension ClickHouseEventStore {
  /// The version of an ended session's row: above any time in ms.
  static let endedVersion: Int64 = 1 << 62

  public func saveSession(_ session: SessionRecord) async throws {
    try await write(session, version: max(0, session.lastUsedAt))
  }

  public func session(hash: String) async throws -> SessionRecord? {
    let rows = try await client.rows(
      "SELECT hash, key_id, scope, app, created_at, last_used_at, ended_at, version FROM \(schema.sessions) FINAL "
        + "WHERE hash = \(ClickHouseSQL.literal(hash)) LIMIT 1")
    guard let row = rows.first, let scope = KeyRecord.Scope(rawValue: row["scope"].text ?? "") else { return nil }
    return SessionRecord(
      hash: row["hash"].text ?? "", keyID: row["key_id"].text ?? "", scope: scope, app: row["app"].text ?? "",
      createdAt: row["created_at"].int ?? 0, lastUsedAt: row["last_used_at"].int ?? 0, endedAt: row["ended_at"].int)
  }

  public func touchSession(hash: String, at time: Int64) async throws {
    guard var session = try await session(hash: hash), session.endedAt == nil, time > session.lastUsedAt else {
      return
    }
    session.lastUsedAt = time
    try await write(session, version: max(0, time))
  }

  public func endSession(hash: String, at time: Int64) async throws {
    guard var session = try await session(hash: hash), session.endedAt == nil else { return }
    session.endedAt = time
    try await write(session, version: Self.endedVersion + max(0, time))
  }

  public func appendAudit(_ entry: AuditEntry) async throws {
    let row: [String: Any] = ["time": entry.time, "actor": entry.actor, "action": entry.action, "detail": entry.detail]
    try await insert(into: schema.audit, ClickHouseRows.columns([row]), ClickHouseRows.body([row]))
  }

  public func auditTrail(limit: Int) async throws -> [AuditEntry] {
    try await client.rows(
      "SELECT time, actor, action, detail FROM \(schema.audit) ORDER BY time DESC LIMIT \(max(0, limit))"
    ).map { row in
      AuditEntry(
        time: row["time"].int ?? 0, actor: row["actor"].text ?? "", action: row["action"].text ?? "",
        detail: row["detail"].text ?? "")
    }
  }

  private func write(_ session: SessionRecord, version: Int64) async throws {
    let row: [String: Any] = [
      "hash": session.hash, "key_id": session.keyID, "scope": session.scope.rawValue, "app": session.app,
      "created_at": session.createdAt, "last_used_at": session.lastUsedAt,
      "ended_at": session.endedAt.map { $0 as Any } ?? NSNull(), "version": version,
    ]
    try await insert(into: schema.sessions, ClickHouseRows.columns([row]), ClickHouseRows.body([row]))
  }
}
