public import CollectorStore
import GRDB

/// Saved searches and reports (migration 11) and chart notes (migration 12) in SQLite.
extension SQLiteEventStore {
  public func saveView(_ view: SavedView) async throws {
    _ = try await change(
      """
      INSERT INTO saved_views (\(SavedView.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET
      name = excluded.name, path = excluded.path, query = excluded.query, updated_at = excluded.updated_at
      """,
      [view.id, view.app, view.name, view.path, view.query, view.createdBy, view.createdAt, view.updatedAt])
  }

  public func savedViews(app: String) async throws -> [SavedView] {
    try await read("SELECT \(SavedView.columns) FROM saved_views WHERE app = ? ORDER BY name, id", [.text(app)])
      .map(SavedView.init)
  }

  public func savedView(id: String) async throws -> SavedView? {
    try await read("SELECT \(SavedView.columns) FROM saved_views WHERE id = ?", [.text(id)]).first.map(SavedView.init)
  }

  public func deleteView(id: String, at time: Int64) async throws -> Bool {
    try await change("DELETE FROM saved_views WHERE id = ?", [id]) > 0
  }

  public func addAnnotation(_ annotation: Annotation) async throws {
    _ = try await change(
      "INSERT INTO annotations (\(Annotation.columns)) VALUES (?, ?, ?, ?, ?, ?)",
      [
        annotation.id, annotation.app, annotation.time, annotation.text, annotation.createdBy, annotation.createdAt,
      ])
  }

  public func annotations(app: String, from: Int64, to: Int64) async throws -> [Annotation] {
    try await read(
      "SELECT \(Annotation.columns) FROM annotations WHERE app = ? AND time >= ? AND time < ? ORDER BY time, id",
      [.text(app), .int(from), .int(to)]
    ).map(Annotation.init)
  }

  public func annotation(id: String) async throws -> Annotation? {
    try await read("SELECT \(Annotation.columns) FROM annotations WHERE id = ?", [.text(id)]).first.map(Annotation.init)
  }

  public func deleteAnnotation(id: String, at time: Int64) async throws -> Bool {
    try await change("DELETE FROM annotations WHERE id = ?", [id]) > 0
  }

  /// Runs one statement that writes; returns the rows it changed.
  private func change(_ sql: String, _ arguments: StatementArguments) async throws -> Int {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(sql: sql, arguments: arguments)
        return db.changesCount
      }
    }
  }
}
