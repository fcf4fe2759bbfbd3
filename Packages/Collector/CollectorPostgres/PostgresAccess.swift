public import CollectorStore
import Logging
import PostgresNIO

/// Dashboard sessions and the audit trail in PostgreSQL (migration 5), shared by every collector
/// on the database. Values are bound through `PostgresQuery`'s interpolation (`\(value)` is a
/// bind, `\(unescaped:)` a table name), never spliced into the text.
extension PostgresEventStore {
  public func saveSession(_ session: SessionRecord) async throws {
    try await execute(
      """
      INSERT INTO \(unescaped: tables.sessions) (hash, key_id, scope, app, created_at, last_used_at, ended_at)
      VALUES (\(session.hash), \(session.keyID), \(session.scope.rawValue), \(session.app), \(session.createdAt),
      \(session.lastUsedAt), \(session.endedAt)) ON CONFLICT (hash) DO NOTHING
      """)
  }

  public func session(hash: String) async throws -> SessionRecord? {
    try await guarded {
      let rows = try await client.query(
        """
        SELECT hash, key_id, scope, app, created_at, last_used_at, ended_at FROM \(unescaped: tables.sessions)
        WHERE hash = \(hash)
        """,
        logger: logger)
      for try await plain in rows {
        let row = plain.makeRandomAccess()
        guard let scope = KeyRecord.Scope(rawValue: try row["scope"].decode(String.self)) else { return nil }
        return SessionRecord(
          hash: try row["hash"].decode(String.self), keyID: try row["key_id"].decode(String.self), scope: scope,
          app: try row["app"].decode(String.self), createdAt: try row["created_at"].decode(Int64.self),
          lastUsedAt: try row["last_used_at"].decode(Int64.self), endedAt: try row["ended_at"].decode(Int64?.self))
      }
      return nil
    }
  }

  public func touchSession(hash: String, at time: Int64) async throws {
    try await execute(
      """
      UPDATE \(unescaped: tables.sessions) SET last_used_at = greatest(last_used_at, \(time))
      WHERE hash = \(hash) AND ended_at IS NULL
      """)
  }

  public func endSession(hash: String, at time: Int64) async throws {
    try await execute(
      "UPDATE \(unescaped: tables.sessions) SET ended_at = coalesce(ended_at, \(time)) WHERE hash = \(hash)")
  }

  public func appendAudit(_ entry: AuditEntry) async throws {
    try await execute(
      """
      INSERT INTO \(unescaped: tables.audit) (time, actor, action, detail)
      VALUES (\(entry.time), \(entry.actor), \(entry.action), \(entry.detail))
      """)
  }

  public func auditTrail(limit: Int) async throws -> [AuditEntry] {
    try await guarded {
      let rows = try await client.query(
        """
        SELECT time, actor, action, detail FROM \(unescaped: tables.audit) ORDER BY time DESC
        LIMIT \(Int64(max(0, limit)))
        """,
        logger: logger)
      var entries: [AuditEntry] = []
      for try await (time, actor, action, detail) in rows.decode((Int64, String, String, String).self) {
        entries.append(AuditEntry(time: time, actor: actor, action: action, detail: detail))
      }
      return entries
    }
  }

  /// Runs one statement that returns nothing.
  func execute(_ query: PostgresQuery) async throws {
    _ = try await guarded { try await client.query(query, logger: logger) }
  }
}
