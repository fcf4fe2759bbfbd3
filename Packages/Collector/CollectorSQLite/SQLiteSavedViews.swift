public import CollectorStore
import GRDB

/// Saved searches and reports in SQLite (migration 11).
extension SQLiteEventStore {
  public func saveView(_ view: SavedView) async throws {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(
          sql: """
            INSERT INTO saved_views (id, app, name, path, query, created_by, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET
            name = excluded.name, path = excluded.path, query = excluded.query, updated_at = excluded.updated_at
            """,
          arguments: [
            view.id, view.app, view.name, view.path, view.query, view.createdBy, view.createdAt, view.updatedAt,
          ])
      }
    }
  }

  public func savedViews(app: String) async throws -> [SavedView] {
    try await views("WHERE app = ? ORDER BY name, id", app)
  }

  public func savedView(id: String) async throws -> SavedView? {
    try await views("WHERE id = ?", id).first
  }

  public func deleteView(id: String, at time: Int64) async throws -> Bool {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(sql: "DELETE FROM saved_views WHERE id = ?", arguments: [id])
        return db.changesCount > 0
      }
    }
  }

  private func views(_ condition: String, _ value: String) async throws -> [SavedView] {
    try await read("SELECT \(SavedView.columns) FROM saved_views \(condition)", [.text(value)]).map(SavedView.init)
  }
}
