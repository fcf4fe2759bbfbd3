/// A saved search or report: a dashboard page with its filters, under a name, for one app.
///
/// It holds the page's path and query string (never a key: keys are never in a URL), so opening it
/// is opening that link; anyone who may read the app may open it, and its creator or an admin may
/// change or delete it.
public struct SavedView: Sendable, Hashable, Codable {
  /// A random id, 16 lowercase hex digits: the view's link is `/dashboard/saved/<id>`.
  public var id: String
  /// The app it belongs to (without an environment: the query may name one).
  public var app: String
  /// Its name as listed.
  public var name: String
  /// The page (`/dashboard/search`, `/dashboard/retention`, …).
  public var path: String
  /// The page's query string without `?` (`app=ty&from=2026-11-01&event=purchase`).
  public var query: String
  /// The public id of the key whose session saved it (``KeyRecord/id``).
  public var createdBy: String
  /// When it was first saved and last changed (ms, UTC).
  public var createdAt: Int64, updatedAt: Int64

  /// A saved view.
  public init(
    id: String, app: String, name: String, path: String, query: String, createdBy: String, createdAt: Int64,
    updatedAt: Int64
  ) {
    self.id = id
    self.app = app
    self.name = name
    self.path = path
    self.query = query
    self.createdBy = createdBy
    self.createdAt = createdAt
    self.updatedAt = updatedAt
  }
}

extension SavedView {
  /// The stored columns, in every engine's table order.
  public static let columns = "id, app, name, path, query, created_by, created_at, updated_at"

  /// The view a row of ``columns`` holds.
  public init(_ row: SQLRow) {
    self.init(
      id: row["id"].text ?? "", app: row["app"].text ?? "", name: row["name"].text ?? "", path: row["path"].text ?? "",
      query: row["query"].text ?? "", createdBy: row["created_by"].text ?? "", createdAt: row["created_at"].int ?? 0,
      updatedAt: row["updated_at"].int ?? 0)
  }
}

/// Saved searches and reports, kept in the store so that every collector sharing it lists the same
/// ones and they outlive a restart.
public protocol SavedViewStore: Sendable {
  /// Stores `view`, replacing the one with its id.
  func saveView(_ view: SavedView) async throws

  /// The app's saved views, by name.
  func savedViews(app: String) async throws -> [SavedView]

  /// The view with this id, if there is one.
  func savedView(id: String) async throws -> SavedView?

  /// Deletes the view (`at`: when, ms); `false` when there was none.
  func deleteView(id: String, at time: Int64) async throws -> Bool
}
