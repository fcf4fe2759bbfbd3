import CollectorDashboard
import CollectorRuntime
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Signing in and out of the dashboard.
///
/// - `GET /login` shows the form; a key in its query is refused (400), never honoured: a key in a
///   URL ends up in the browser's history, proxies' logs and `Referer` headers.
/// - `POST /login` takes `key` and `next` from a form body, rate-limited per client address (429
///   with `Retry-After`); a read or admin key begins a session and sets its cookie.
/// - `POST /logout` ends the session everywhere (its CSRF token required) and clears the cookie.
extension DashboardController {
  /// Who is looking at a page: a session's holder, or a script sending a key with each request.
  struct Viewer: Sendable {
    var key: KeyRecord
    /// The session's CSRF token; empty for a key sent with the request.
    var csrf: String
    var isAdmin: Bool { key.scope == .admin }
  }

  /// The viewer of `request`: its session cookie, or its Basic or Bearer read key; `nil` for none.
  func viewer(_ request: Request) async throws -> Viewer? {
    if let token = SessionCookie.token(in: request) {
      let session: SessionRecord?
      do {
        session = try await collector.sessions.authenticate(token, now: EventCollector.now())
      } catch {
        throw Refusal.storage("retry")
      }
      if let session, session.scope.allows(.read) {
        return Viewer(key: session.principal, csrf: SessionRing.csrf(for: token))
      }
    }
    guard let key = Credentials.basic(request) ?? Credentials.bearer(request), !key.isEmpty else { return nil }
    guard let record = try? await collector.keyRing.authenticate(key), record.scope.allows(.read) else { return nil }
    return Viewer(key: record, csrf: "")
  }

  func loginForm(_ request: Request) -> Response {
    let query = request.form
    let next = SameSitePath.normalised(query.get("next"))
    if query.get("key") != nil {
      return .html(
        .badRequest,
        Dashboard.login(
          next: next,
          problem: "Keys are never taken from a URL (it would stay in your browser's history): type it here. "
            + "If that key is shared, rotate it."))
    }
    return .html(.ok, Dashboard.login(next: next))
  }

  func signIn(_ request: Request, _ context: CollectorRequestContext) async throws -> Response {
    let security = collector.configuration.security
    let address = SessionCookie.clientAddress(request, peer: context.remoteAddress, security)
    if let wait = collector.signInLimiter.take(1, key: address) {
      throw Refusal(.tooManyRequests, "", "too many sign-in attempts from this address", retryAfter: wait)
    }
    let form = FormQuery(String(decoding: try await RequestBody.read(request, limit: 16 * 1024), as: UTF8.self))
    let next = SameSitePath.normalised(form.get("next"))
    guard let key = form.secret("key"), !key.isEmpty else {
      return .html(.unauthorized, Dashboard.login(next: next, problem: "Type a read or admin key."))
    }
    let record: KeyRecord?
    do {
      record = try await collector.keyRing.authenticate(key)
    } catch {
      throw Refusal.storage("retry")
    }
    guard let record, record.scope.allows(.read) else {
      collector.logger.notice("sign-in refused", metadata: ["address": .string(address)])
      return .html(.unauthorized, Dashboard.login(next: next, problem: "That is not a read or admin key."))
    }
    let now = EventCollector.now()
    let started: SessionRing.Started
    do {
      started = try await collector.sessions.start(for: record, now: now)
    } catch {
      throw Refusal.storage("retry")
    }
    await collector.audited(record, "sign-in", "dashboard session from \(address)")
    let secure = SessionCookie.isSecure(request, security)
    let cookie = SessionCookie.set(started.token, secure: secure, maxAge: Int(security.sessionLifetimeSeconds))
    return Response(status: .seeOther, headers: [.location: next, .setCookie: cookie])
  }

  func signOut(_ request: Request) async throws -> Response {
    let secure = SessionCookie.isSecure(request, collector.configuration.security)
    guard let token = SessionCookie.token(in: request) else {
      return Response(
        status: .seeOther, headers: [.location: "/login", .setCookie: SessionCookie.clear(secure: secure)])
    }
    let form = FormQuery(String(decoding: try await RequestBody.read(request, limit: 16 * 1024), as: UTF8.self))
    let presented = request.headers[HTTPField.Name("X-CSRF-Token")!] ?? form.get("csrf")
    guard SessionRing.checks(csrf: presented, token: token) else {
      throw Refusal(.forbidden, "csrf", "signing out needs the session's CSRF token (the page's Sign out button)")
    }
    let now = EventCollector.now()
    let session = try? await collector.sessions.authenticate(token, now: now)
    do {
      try await collector.sessions.end(token, now: now)
    } catch {
      throw Refusal.storage("retry")
    }
    if let session {
      await collector.audited(session.principal, "sign-out", "dashboard session ended")
    }
    return Response(status: .seeOther, headers: [.location: "/login", .setCookie: SessionCookie.clear(secure: secure)])
  }
}
