public import CollectorStore
import Logging
import PostgresNIO

/// Dashboard sessions and the audit trail in PostgreSQL (migration 5), shared by every collector
/// on the database.
extension PostgresEventStore {
  public func saveSession(_ session: SessionRecord) async throws {
    var binds = PostgresBindings()
    binds.append(session.hash)
    binds.append(session.keyID)
    binds.append(session.scope.rawValue)
    binds.append(session.app)
    binds.append(session.createdAt)
    binds.append(session.lastUsedAt)
    binds.append(session.endedAt)
    try await execute(
      """
      INSERT INTO \(tables.sessions) (hash, key_id, scope, app, created_at, last_used_at, ended_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (hash) DO NOTHING
      """, binds)
  }

  public func session(hash: String) async throws -> SessionRecord? {
    try await guarded {
      var binds = PostgresBindings()
      binds.append(hash)
      let rows = try await client.query(
        PostgresQuery(
          unsafeSQL: "SELECT hash, key_id, scope, app, created_at, last_used_at, ended_at FROM \(tables.sessions) "
            + "WHERE hash = $1",
          binds: binds),
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
    var binds = PostgresBindings()
    binds.append(time)
    binds.append(hash)
    try await execute(
      "UPDATE \(tables.sessions) SET last_used_at = greatest(last_used_at, $1) WHERE hash = $2 AND ended_at IS NULL",
      binds)
  }

  public func endSession(hash: String, at time: Int64) async throws {
    var binds = PostgresBindings()
    binds.append(time)
    binds.append(hash)
    try await execute("UPDATE \(tables.sessions) SET ended_at = coalesce(ended_at, $1) WHERE hash = $2", binds)
  }

  public func appendAudit(_ entry: AuditEntry) async throws {
    var binds = PostgresBindings()
    binds.append(entry.time)
    binds.append(entry.actor)
    binds.append(entry.action)
    binds.append(entry.detail)
    try await execute("INSERT INTO \(tables.audit) (time, actor, action, detail) VALUES ($1, $2, $3, $4)", binds)
  }

  public func auditTrail(limit: Int) async throws -> [AuditEntry] {
    try await guarded {
      var binds = PostgresBindings()
      binds.append(Int64(max(0, limit)))
      let rows = try await client.query(
        PostgresQuery(
          unsafeSQL: "SELECT time, actor, action, detail FROM \(tables.audit) ORDER BY time DESC LIMIT $1",
          binds: binds),
        logger: logger)
      var entries: [AuditEntry] = []
      for try await (time, actor, action, detail) in rows.decode((Int64, String, String, String).self) {
        entries.append(AuditEntry(time: time, actor: actor, action: action, detail: detail))
      }
      return entries
    }
  }

  /// Runs one statement that returns nothing.
  private func execute(_ sql: String, _ binds: PostgresBindings) async throws {
    _ = try await guarded {
      try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
    }
  }
}
