import CollectorDashboard
import CollectorReports
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird

/// Saved searches and reports: `POST /views/save` (a new view, or a renamed or changed one),
/// `POST /views/delete`, and `GET /dashboard/view/<id>`, the link that opens a view.
///
/// Any signed-in session may save a view of an app and open every view; only the view's creator or
/// an admin may change or delete it. Both forms need the session's CSRF token. A view keeps a page
/// and its query string, never a key (a query naming `key` is refused).
extension DashboardController {
  /// The longest query string a view keeps, in bytes.
  static let longestViewQuery = 4_096

  func openView(_ request: Request, id: String) async throws -> Response {
    guard try await viewer(request) != nil else {
      return .html(.unauthorized, Dashboard.login(next: "/dashboard/view/\(id)"))
    }
    guard let view = try await collector.storing("saved view", { try await collector.store.savedView(id: id) }) else {
      return .html(
        .notFound, Dashboard.problem(title: "Not found", message: "There is no saved view \(id); it may be deleted."))
    }
    let query = (view.query.isEmpty ? "" : view.query + "&") + "view=\(view.id)"
    return Response(status: .seeOther, headers: [.location: "\(view.path)?\(query)"])
  }

  func saveView(_ request: Request) async throws -> Response {
    let (session, form) = try await sessionForm(request, action: "saving a view")
    let now = EventCollector.now()
    let name = (form.get("name") ?? "").trimmingCharacters(in: .whitespaces)
    guard (1...200).contains(name.count) else { throw FieldError(field: "name", reason: "is 1 to 200 characters") }
    try ReportText.check(name, field: "name")
    var view: SavedView
    if let id = form.get("id"), !id.isEmpty, form.get("copy") != "1" {
      view = try await changeable(id, by: session)
      view.name = name
      view.updatedAt = now
    } else {
      let app = form.get("app") ?? ""
      guard !app.isEmpty else { throw FieldError(field: "app", reason: "name the app the view is of") }
      try ReportText.check(app, field: "app")
      view = SavedView(
        id: Self.newRecordID(), app: app, name: name, path: "/", query: "", createdBy: session.keyID, createdAt: now,
        updatedAt: now)
    }
    if let path = form.get("path") { view.path = try Self.viewPath(path) }
    if let query = form.get("query") { view.query = try Self.viewQuery(query) }
    let saved = view
    try await collector.storing("saved view") { try await collector.store.saveView(saved) }
    await collector.audited(session.principal, "view-save", "app \(view.app): \(view.id) \(view.name)")
    return Response(status: .seeOther, headers: [.location: Self.savedPage(app: view.app)])
  }

  func deleteView(_ request: Request) async throws -> Response {
    let (session, form) = try await sessionForm(request, action: "deleting a view")
    let view = try await changeable(form.get("id") ?? "", by: session)
    _ = try await collector.storing("saved view") {
      try await collector.store.deleteView(id: view.id, at: EventCollector.now())
    }
    await collector.audited(session.principal, "view-delete", "app \(view.app): \(view.id) \(view.name)")
    return Response(status: .seeOther, headers: [.location: Self.savedPage(app: view.app)])
  }

  /// The signed-in session of a form's request and the form, its CSRF token checked (`action`
  /// names what the form does, in the refusal).
  func sessionForm(_ request: Request, action: String) async throws -> (SessionRecord, FormQuery) {
    guard let token = SessionCookie.token(in: request),
      let session = try await collector.sessions.authenticate(token, now: EventCollector.now())
    else { throw Refusal(.unauthorized, "session", "has ended; sign in again") }
    let form = FormQuery(String(decoding: try await RequestBody.read(request, limit: 16 * 1024), as: UTF8.self))
    guard SessionRing.checks(csrf: form.get("csrf"), token: token) else {
      throw Refusal(.forbidden, "csrf", "\(action) needs the session's CSRF token (the page's button)")
    }
    return (session, form)
  }

  /// The view `id`, which `session` may change (its creator, or an admin).
  private func changeable(_ id: String, by session: SessionRecord) async throws -> SavedView {
    guard let view = try await collector.storing("saved view", { try await collector.store.savedView(id: id) }) else {
      throw Refusal(.notFound, "id", "there is no saved view \(id)")
    }
    guard session.scope == .admin || view.createdBy == session.keyID else {
      throw Refusal(.forbidden, "id", "only its creator (\(view.createdBy)) or an admin may change this view")
    }
    return view
  }

  static func newRecordID() -> String {
    var generator = SystemRandomNumberGenerator()
    let value = generator.next() as UInt64
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }

  /// A page a view may open: any page but the saved views and the audit trail.
  static func viewPath(_ path: String) throws(FieldError) -> String {
    guard let page = DashboardPage(path: path), page != .saved, page != .audit else {
      throw FieldError(field: "path", reason: "is a dashboard page (/, /dashboard/search, …)")
    }
    return page.path
  }

  /// A page's query as a view keeps it: no `key` (keys are never in a URL), no view id or cursor.
  static func viewQuery(_ query: String) throws(FieldError) -> String {
    guard query.utf8.count <= longestViewQuery else {
      throw FieldError(field: "query", reason: "is longer than \(longestViewQuery) bytes")
    }
    guard !CollectorLimits.hasControlCharacter(query) else {
      throw FieldError(field: "query", reason: "must not contain control characters")
    }
    func name(_ item: Substring) -> String {
      let raw = String(item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0])
      return (raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw).lowercased()
    }
    let items = query.split(separator: "&").filter { !["view", "after", "csrf", "replayed"].contains(name($0)) }
    guard !items.contains(where: { name($0) == "key" }) else {
      throw FieldError(field: "query", reason: "must not hold a key")
    }
    return items.joined(separator: "&")
  }

  /// The saved views page of `app`.
  static func savedPage(app: String) -> String {
    "/dashboard/saved?app=" + (app.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
  }
}
