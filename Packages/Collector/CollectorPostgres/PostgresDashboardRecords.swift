public import CollectorStore
import Logging
import PostgresNIO

/// Saved searches and reports (migration 11) and chart notes (migration 12) in PostgreSQL, bound
/// as ``PostgresAccess`` binds.
extension PostgresEventStore {
  public func saveView(_ view: SavedView) async throws {
    try await execute(
      """
      INSERT INTO \(unescaped: tables.savedViews) (\(unescaped: SavedView.columns))
      VALUES (\(view.id), \(view.app), \(view.name), \(view.path), \(view.query), \(view.createdBy),
      \(view.createdAt), \(view.updatedAt)) ON CONFLICT (id) DO UPDATE SET name = excluded.name,
      path = excluded.path, query = excluded.query, updated_at = excluded.updated_at
      """)
  }

  public func savedViews(app: String) async throws -> [SavedView] {
    try await records(SavedView.columns, tables.savedViews, "app = $1 ORDER BY name, id", [.text(app)])
      .map(SavedView.init)
  }

  public func savedView(id: String) async throws -> SavedView? {
    try await records(SavedView.columns, tables.savedViews, "id = $1", [.text(id)]).first.map(SavedView.init)
  }

  public func deleteView(id: String, at time: Int64) async throws -> Bool {
    try await deleted(from: tables.savedViews, id: id)
  }

  public func addAnnotation(_ annotation: Annotation) async throws {
    try await execute(
      """
      INSERT INTO \(unescaped: tables.annotations) (\(unescaped: Annotation.columns))
      VALUES (\(annotation.id), \(annotation.app), \(annotation.time), \(annotation.text), \(annotation.createdBy),
      \(annotation.createdAt))
      """)
  }

  public func annotations(app: String, from: Int64, to: Int64) async throws -> [Annotation] {
    try await records(
      Annotation.columns, tables.annotations, "app = $1 AND time >= $2 AND time < $3 ORDER BY time, id",
      [.text(app), .int(from), .int(to)]
    ).map(Annotation.init)
  }

  public func annotation(id: String) async throws -> Annotation? {
    try await records(Annotation.columns, tables.annotations, "id = $1", [.text(id)]).first.map(Annotation.init)
  }

  /// The `columns` of the rows of `table` that match `condition` (with its ordering).
  private func records(_ columns: String, _ table: String, _ condition: String, _ arguments: [SQLValue])
    async throws -> [SQLRow]
  {
    try await read("SELECT \(columns) FROM \(table) WHERE \(condition)", arguments)
  }

  public func deleteAnnotation(id: String, at time: Int64) async throws -> Bool {
    try await deleted(from: tables.annotations, id: id)
  }

  /// Deletes the row `id` of `table`; whether there was one.
  private func deleted(from table: String, id: String) async throws -> Bool {
    try await guarded {
      let rows = try await client.query("DELETE FROM \(unescaped: table) WHERE id = \(id) RETURNING id", logger: logger)
      for try await _ in rows { return true }
      return false
    }
  }
}
