public import CollectorStore
import GRDB

/// Dashboard sessions and the audit trail in the SQLite file (migration 5).
extension SQLiteEventStore {
  public func saveSession(_ session: SessionRecord) async throws {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(
          sql: """
            INSERT INTO sessions (hash, key_id, scope, app, created_at, last_used_at, ended_at)
            VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING
            """,
          arguments: [
            session.hash, session.keyID, session.scope.rawValue, session.app, session.createdAt,
            session.lastUsedAt, session.endedAt,
          ])
      }
    }
  }

  public func session(hash: String) async throws -> SessionRecord? {
    try await run { [pool] in
      try pool.read { db in
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM sessions WHERE hash = ?", arguments: [hash]),
          let scope = KeyRecord.Scope(rawValue: row["scope"])
        else { return nil }
        return SessionRecord(
          hash: row["hash"], keyID: row["key_id"], scope: scope, app: row["app"], createdAt: row["created_at"],
          lastUsedAt: row["last_used_at"], endedAt: row["ended_at"])
      }
    }
  }

  public func touchSession(hash: String, at time: Int64) async throws {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(
          sql: "UPDATE sessions SET last_used_at = max(last_used_at, ?) WHERE hash = ? AND ended_at IS NULL",
          arguments: [time, hash])
      }
    }
  }

  public func endSession(hash: String, at time: Int64) async throws {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(
          sql: "UPDATE sessions SET ended_at = coalesce(ended_at, ?) WHERE hash = ?", arguments: [time, hash])
      }
    }
  }

  public func appendAudit(_ entry: AuditEntry) async throws {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(
          sql: "INSERT INTO audit (time, actor, action, detail) VALUES (?, ?, ?, ?)",
          arguments: [entry.time, entry.actor, entry.action, entry.detail])
      }
    }
  }

  public func auditTrail(limit: Int) async throws -> [AuditEntry] {
    try await run { [pool] in
      try pool.read { db in
        try Row.fetchAll(
          db, sql: "SELECT * FROM audit ORDER BY time DESC, rowid DESC LIMIT ?", arguments: [max(0, limit)]
        ).map { row in
          AuditEntry(time: row["time"], actor: row["actor"], action: row["action"], detail: row["detail"])
        }
      }
    }
  }
}
