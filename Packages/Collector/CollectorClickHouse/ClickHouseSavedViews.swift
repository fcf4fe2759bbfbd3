public import CollectorStore
import Foundation

/// Saved searches and reports on ClickHouse (migration 7). A view is rewritten, never updated: each
/// save writes a row whose `version` is its change time, a deletion one with `deleted = 1` above it;
/// reads take the newest version with `FINAL`.
extension ClickHouseEventStore {
  public func saveView(_ view: SavedView) async throws {
    try await write(view, deleted: false, version: max(0, view.updatedAt))
  }

  public func savedViews(app: String) async throws -> [SavedView] {
    try await views("app = \(ClickHouseSQL.literal(app))")
  }

  public func savedView(id: String) async throws -> SavedView? {
    try await views("id = \(ClickHouseSQL.literal(id))").first
  }

  public func deleteView(id: String, at time: Int64) async throws -> Bool {
    guard let view = try await savedView(id: id) else { return false }
    try await write(view, deleted: true, version: max(view.updatedAt + 1, time))
    return true
  }

  private func views(_ condition: String) async throws -> [SavedView] {
    try await client.rows(
      "SELECT \(SavedView.columns) FROM \(schema.savedViews) FINAL WHERE \(condition) AND deleted = 0 "
        + "ORDER BY name, id LIMIT 10000"
    ).map(SavedView.init)
  }

  private func write(_ view: SavedView, deleted: Bool, version: Int64) async throws {
    let row: [String: Any] = [
      "id": view.id, "app": view.app, "name": view.name, "path": view.path, "query": view.query,
      "created_by": view.createdBy, "created_at": view.createdAt, "updated_at": view.updatedAt,
      "deleted": deleted ? 1 : 0, "version": version,
    ]
    try await insert(into: schema.savedViews, ClickHouseRows.columns([row]), ClickHouseRows.body([row]))
  }
}
