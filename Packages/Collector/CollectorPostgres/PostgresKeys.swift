public import CollectorStore
import Foundation
import Logging
import PostgresNIO

/// The key ring's table: write keys and admin keys, stored hashed. Values are bound through
/// `PostgresQuery`'s interpolation.
extension PostgresEventStore {
  public func saveKey(_ key: KeyRecord) async throws {
    _ = try await guarded {
      try await client.query(
        """
        INSERT INTO \(unescaped: tables.keys) (id, app, scope, hash, created_at, revoked_at)
        VALUES (\(key.id), \(key.app), \(key.scope.rawValue), \(key.hash), to_timestamp(\(key.createdAt) / 1000.0),
        to_timestamp(\(key.revokedAt) / 1000.0)) ON CONFLICT (hash) DO NOTHING
        """,
        logger: logger)
    }
  }

  public func key(hash: String) async throws -> KeyRecord? {
    try await guarded {
      let rows = try await client.query(
        "SELECT \(unescaped: PostgresTables.keyColumns) FROM \(unescaped: tables.keys) WHERE hash = \(hash)",
        logger: logger)
      for try await row in rows { return try PostgresTables.key(row) }
      return nil
    }
  }

  public func keys() async throws -> [KeyRecord] {
    try await guarded {
      let rows = try await client.query(
        "SELECT \(unescaped: PostgresTables.keyColumns) FROM \(unescaped: tables.keys) ORDER BY created_at DESC, id",
        logger: logger)
      var keys: [KeyRecord] = []
      for try await row in rows {
        if let key = try PostgresTables.key(row) { keys.append(key) }
      }
      return keys
    }
  }

  public func revokeKey(id: String, at time: Int64) async throws -> Bool {
    try await guarded {
      let rows = try await client.query(
        """
        WITH changed AS (UPDATE \(unescaped: tables.keys) SET revoked_at = coalesce(revoked_at,
        to_timestamp(\(time) / 1000.0)) WHERE id = \(id) RETURNING 1) SELECT count(*)::bigint FROM changed
        """,
        logger: logger)
      return try await Self.count(rows) > 0
    }
  }
}
