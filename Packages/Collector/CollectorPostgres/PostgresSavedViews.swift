public import CollectorStore
import Logging
import PostgresNIO

/// Saved searches and reports in PostgreSQL (migration 11), bound as ``PostgresAccess`` binds.
extension PostgresEventStore {
  public func saveView(_ view: SavedView) async throws {
    try await execute(
      """
      INSERT INTO \(unescaped: tables.savedViews) (id, app, name, path, query, created_by, created_at, updated_at)
      VALUES (\(view.id), \(view.app), \(view.name), \(view.path), \(view.query), \(view.createdBy),
      \(view.createdAt), \(view.updatedAt)) ON CONFLICT (id) DO UPDATE SET name = excluded.name,
      path = excluded.path, query = excluded.query, updated_at = excluded.updated_at
      """)
  }

  public func savedViews(app: String) async throws -> [SavedView] {
    try await views("WHERE app = $1 ORDER BY name, id", app)
  }

  public func savedView(id: String) async throws -> SavedView? {
    try await views("WHERE id = $1", id).first
  }

  public func deleteView(id: String, at time: Int64) async throws -> Bool {
    try await guarded {
      let rows = try await client.query(
        "DELETE FROM \(unescaped: tables.savedViews) WHERE id = \(id) RETURNING id", logger: logger)
      for try await _ in rows { return true }
      return false
    }
  }

  private func views(_ condition: String, _ value: String) async throws -> [SavedView] {
    try await read("SELECT \(SavedView.columns) FROM \(tables.savedViews) \(condition)", [.text(value)])
      .map(SavedView.init)
  }
}
