public import CollectorStore
import Foundation
import Logging
import PostgresNIO

/// The key ring's table: write keys and admin keys, stored hashed.
extension PostgresEventStore {
  public func saveKey(_ key: KeyRecord) async throws {
    try await guarded {
      var binds = PostgresBindings()
      binds.append(key.id)
      binds.append(key.app)
      binds.append(key.scope.rawValue)
      binds.append(key.hash)
      binds.append(key.createdAt)
      binds.append(key.revokedAt)
      try await client.query(
        PostgresQuery(
          unsafeSQL: """
            INSERT INTO \(tables.keys) (id, app, scope, hash, created_at, revoked_at)
            VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0), to_timestamp($6 / 1000.0))
            ON CONFLICT (hash) DO NOTHING
            """,
          binds: binds
        ),
        logger: logger
      )
    }
  }

  public func key(hash: String) async throws -> KeyRecord? {
    try await guarded {
      var binds = PostgresBindings()
      binds.append(hash)
      let rows = try await client.query(
        PostgresQuery(
          unsafeSQL: "SELECT \(PostgresTables.keyColumns) FROM \(tables.keys) WHERE hash = $1", binds: binds),
        logger: logger
      )
      for try await row in rows { return try PostgresTables.key(row) }
      return nil
    }
  }

  public func keys() async throws -> [KeyRecord] {
    try await guarded {
      let rows = try await client.query(
        PostgresQuery(
          unsafeSQL: "SELECT \(PostgresTables.keyColumns) FROM \(tables.keys) ORDER BY created_at DESC, id"
        ),
        logger: logger
      )
      var keys: [KeyRecord] = []
      for try await row in rows {
        if let key = try PostgresTables.key(row) { keys.append(key) }
      }
      return keys
    }
  }

  public func revokeKey(id: String, at time: Int64) async throws -> Bool {
    try await guarded {
      var binds = PostgresBindings()
      binds.append(time)
      binds.append(id)
      let rows = try await client.query(
        PostgresQuery(
          unsafeSQL: "WITH changed AS (UPDATE \(tables.keys) SET revoked_at = coalesce(revoked_at, "
            + "to_timestamp($1 / 1000.0)) WHERE id = $2 RETURNING 1) SELECT count(*)::bigint FROM changed",
          binds: binds
        ),
        logger: logger
      )
      return try await Self.count(rows) > 0
    }
  }
}
