import CollectorRuntime
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The dashboard's session cookie: a random token (``SessionRing``), `HttpOnly`, `SameSite=Strict`,
/// `Path=/`, and `Secure` with the `__Host-` name when the request came over TLS (or the
/// configuration says always).
enum SessionCookie {
  /// The name without `Secure`.
  static let plainName = "collector_session"
  /// The name with `Secure`: browsers then refuse it unless it is `Secure`, has `Path=/` and no domain.
  static let secureName = "__Host-collector_session"

  /// The session token the request's cookie holds, if any.
  static func token(in request: Request) -> String? {
    guard let cookies = request.headers[.cookie] else { return nil }
    for part in cookies.split(separator: ";") {
      let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
      if pair.count == 2, pair[0] == secureName || pair[0] == plainName { return String(pair[1]) }
    }
    return nil
  }

  /// Whether cookies set in answer to `request` are `Secure`.
  static func isSecure(_ request: Request, _ security: CollectorConfiguration.Security) -> Bool {
    switch security.secureCookies {
    case .always: true
    case .never: false
    case .auto:
      security.trustProxy
        && request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased().hasPrefix("https") == true
    }
  }

  /// The `Set-Cookie` value that keeps `token` for `maxAge` seconds.
  static func set(_ token: String, secure: Bool, maxAge: Int) -> String {
    "\(secure ? secureName : plainName)=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(maxAge)"
      + (secure ? "; Secure" : "")
  }

  /// The `Set-Cookie` value that removes the cookie.
  static func clear(secure: Bool) -> String { set("", secure: secure, maxAge: 0) }

  /// The client's address: the connection's peer, or with `trustProxy` the last address a proxy
  /// added to `X-Forwarded-For` (the one the proxy saw; earlier ones are the client's word).
  static func clientAddress(
    _ request: Request, peer: SocketAddress?, _ security: CollectorConfiguration.Security
  ) -> String {
    if security.trustProxy, let forwarded = request.headers[HTTPField.Name("X-Forwarded-For")!],
      let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
    {
      return last
    }
    return peer?.ipAddress ?? "unknown"
  }
}

extension Response {
  /// The headers every dashboard page carries: no script but the dashboard's own file (the live
  /// page's, ``Dashboard/liveScript``; nothing inline), no framing, no referrer, no sniffing, no
  /// caching of pages that show data.
  static let dashboardHeaders: HTTPFields = [
    HTTPField.Name("Content-Security-Policy")!:
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; "
      + "form-action 'self'; "
      + "frame-ancestors 'none'; base-uri 'none'",
    HTTPField.Name("Referrer-Policy")!: "no-referrer",
    HTTPField.Name("X-Content-Type-Options")!: "nosniff",
    HTTPField.Name("X-Frame-Options")!: "DENY",
    .cacheControl: "no-store",
  ]
}

/// Adds ``Response/dashboardHeaders`` to every answer of the routes behind it.
struct DashboardHeadersMiddleware: RouterMiddleware {
  typealias Context = CollectorRequestContext

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    var response = try await next(request, context)
    for field in Response.dashboardHeaders { response.headers[field.name] = field.value }
    return response
  }
}
