public import CollectorStore
import Foundation

/// Saved searches and reports (migration 7) and chart notes (migration 8) on ClickHouse. A record
/// is rewritten, never updated: each save writes a row whose `version` is its change time, a
/// deletion one with `deleted = 1` above it; reads take the newest version with `FINAL`.
extension ClickHouseEventStore {
  public func saveView(_ view: SavedView) async throws {
    try await write(view, deleted: false, version: max(0, view.updatedAt))
  }

  public func savedViews(app: String) async throws -> [SavedView] {
    try await records(SavedView.columns, schema.savedViews, "app = \(ClickHouseSQL.literal(app))", order: "name, id")
      .map(SavedView.init)
  }

  public func savedView(id: String) async throws -> SavedView? {
    try await records(SavedView.columns, schema.savedViews, "id = \(ClickHouseSQL.literal(id))", order: "id").first
      .map(SavedView.init)
  }

  public func deleteView(id: String, at time: Int64) async throws -> Bool {
    try await deleted(savedView(id: id), at: time) { try await write($0, deleted: true, version: $1 + $0.updatedAt) }
  }

  public func addAnnotation(_ annotation: Annotation) async throws {
    try await write(annotation, deleted: false, version: max(0, annotation.createdAt))
  }

  public func annotations(app: String, from: Int64, to: Int64) async throws -> [Annotation] {
    let condition =
      "app = \(ClickHouseSQL.literal(app)) AND time >= \(ClickHouseSQL.literal(from)) "
      + "AND time < \(ClickHouseSQL.literal(to))"
    return try await records(Annotation.columns, schema.annotations, condition, order: "time, id").map(Annotation.init)
  }

  public func annotation(id: String) async throws -> Annotation? {
    try await records(Annotation.columns, schema.annotations, "id = \(ClickHouseSQL.literal(id))", order: "id").first
      .map(Annotation.init)
  }

  public func deleteAnnotation(id: String, at time: Int64) async throws -> Bool {
    try await deleted(annotation(id: id), at: time) { try await write($0, deleted: true, version: $1 + $0.createdAt) }
  }

  /// Writes `record`'s deletion (`write`, given the record and a version offset) when there is one.
  private func deleted<Record>(
    _ record: Record?, at time: Int64, _ write: (Record, Int64) async throws -> Void
  ) async throws -> Bool {
    guard let record else { return false }
    // Above the record's own version (its change time), and above the deletion time's.
    try await write(record, max(1, time))
    return true
  }

  /// The live (not deleted) rows of `table` that match `condition`, newest versions only.
  private func records(_ columns: String, _ table: String, _ condition: String, order: String) async throws
    -> [SQLRow]
  {
    try await client.rows(
      "SELECT \(columns) FROM \(table) FINAL WHERE \(condition) AND deleted = 0 ORDER BY \(order) LIMIT 10000")
  }

  private func write(_ view: SavedView, deleted: Bool, version: Int64) async throws {
    try await insert(
      [
        "id": view.id, "app": view.app, "name": view.name, "path": view.path, "query": view.query,
        "created_by": view.createdBy, "created_at": view.createdAt, "updated_at": view.updatedAt,
      ], into: schema.savedViews, deleted: deleted, version: version)
  }

  private func write(_ annotation: Annotation, deleted: Bool, version: Int64) async throws {
    try await insert(
      [
        "id": annotation.id, "app": annotation.app, "time": annotation.time, "text": annotation.text,
        "created_by": annotation.createdBy, "created_at": annotation.createdAt,
      ], into: schema.annotations, deleted: deleted, version: version)
  }

  private func insert(_ fields: [String: Any], into table: String, deleted: Bool, version: Int64) async throws {
    var row = fields
    row["deleted"] = deleted ? 1 : 0
    row["version"] = version
    try await insert(into: table, ClickHouseRows.columns([row]), ClickHouseRows.body([row]))
  }
}
