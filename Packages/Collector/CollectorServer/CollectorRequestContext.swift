import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
public import Hummingbird
import Logging
public import NIOCore

/// What the middleware learns about a request before its handler runs: the key it presented (after
/// ``KeyMiddleware``) and its body, read within limits and inflated (after ``BodyMiddleware``).
public struct CollectorRequestContext: RequestContext, RemoteAddressRequestContext {
  public var coreContext: CoreRequestContextStorage
  /// The authenticated key, once ``KeyMiddleware`` has run.
  var key: KeyRecord?
  /// The body, once ``BodyMiddleware`` has run.
  var body: [UInt8] = []
  /// The dashboard session's token when the request was authenticated by its cookie.
  var sessionToken: String?
  /// The connection's peer.
  public let remoteAddress: SocketAddress?

  public init(source: ApplicationRequestContextSource) {
    self.coreContext = CoreRequestContextStorage(source: source)
    self.remoteAddress = source.channel.remoteAddress
  }

  /// The key ``KeyMiddleware`` authenticated (a route without it has none: a programming error
  /// answered as 401, never a crash).
  func authenticatedKey() throws -> KeyRecord {
    guard let key else { throw Refusal(.unauthorized, "key", "a key is required") }
    return key
  }
}

/// Error mapping and request metrics for one route: whatever the handler or the middleware after this
/// throws is answered as a ``Refusal`` in the surface's form (the native JSON error, SimpleAnalytics'
/// message, GA4's validation messages, Mixpanel's import answer), and every answer is counted under
/// the route's name.
struct SurfaceMiddleware: RouterMiddleware {
  typealias Context = CollectorRequestContext
  /// The route's name in `collector_requests_total`.
  let route: String
  let metrics: CollectorMetrics
  /// The response for a refusal on this surface.
  let answer: @Sendable (Refusal) -> Response

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    let response: Response
    do {
      response = try await next(request, context)
    } catch {
      // Every surface's form keeps the refusal's `Retry-After`, whatever its own answer writes.
      let refusal = Refusal(error)
      response = refusal.answering(answer(refusal))
    }
    metrics.request(route: route, status: Int(response.status.code))
    return response
  }
}

/// Where a route's clients present their key.
enum KeySource: Sendable, Hashable {
  /// `Authorization: Bearer <key>`.
  case bearer
  /// `Authorization: Basic …` (``Credentials/basic(_:)``).
  case basic
  /// A query parameter (SimpleAnalytics' `key`, GA4's `api_secret`).
  case query(String)
  /// Segment's ways: `Authorization: Basic` (the key as user name), `Bearer`, or, without either, the
  /// body's `writeKey` (read by the handler: ``KeyMiddleware`` lets such a request through keyless).
  case segment

  func key(in request: Request) -> String? {
    switch self {
    case .bearer: Credentials.bearer(request)
    case .basic: Credentials.basic(request)
    case .query(let name): request.form.secret(name)
    case .segment: Credentials.bearer(request) ?? Credentials.basic(request)
    }
  }

  /// How to present a key here, for the 401.
  var hint: String {
    switch self {
    case .bearer: "Authorization: Bearer <key>"
    case .basic: "Authorization: Basic, the key as user name or password"
    case .query(let name): "?\(name)=<key>"
    case .segment: "Authorization: Basic with the key as user name, Bearer, or the body's writeKey"
    }
  }
}

/// Authentication: the request's key must be a valid key whose scope allows `scope` (401 without
/// one or with an unknown one, 403 for a key of another role, naming the role needed; 503 when the
/// store does not answer).
///
/// With `sessions`, a request that presents no key may present a dashboard session's cookie instead;
/// a state-changing request (anything but GET and HEAD) so authenticated must carry the session's
/// CSRF token (`X-CSRF-Token`, or `csrf` in the query), or is refused with 403.
struct KeyMiddleware: RouterMiddleware {
  typealias Context = CollectorRequestContext
  let scope: KeyRecord.Scope
  let source: KeySource
  let keyRing: KeyRing
  var sessions: SessionRing?

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    var context = context
    if let sessions, source.key(in: request) == nil, let token = SessionCookie.token(in: request) {
      context.key = try await session(token, sessions: sessions, request: request)
      context.sessionToken = token
    } else if source == .segment, source.key(in: request) == nil {
      // The key is in the body, which is not read yet: the handler authenticates it.
      context.key = nil
    } else {
      context.key = try await authenticate(source.key(in: request))
    }
    return try await next(request, context)
  }

  func authenticate(_ key: String?) async throws -> KeyRecord {
    guard let key, !key.isEmpty else {
      throw Refusal(
        .unauthorized, "key", "a\(scope == .admin ? "n" : "") \(scope.rawValue) key is required (\(source.hint))")
    }
    let record: KeyRecord?
    do {
      record = try await keyRing.authenticate(key)
    } catch {
      throw Refusal(.serviceUnavailable, "", "storage unavailable", retryAfter: 5)
    }
    guard let record else { throw Refusal(.unauthorized, "key", "is not a valid key") }
    return try Self.permit(record, scope)
  }

  /// The session's principal, when it is live, may do `scope` and (for a change) carries its CSRF token.
  private func session(_ token: String, sessions: SessionRing, request: Request) async throws -> KeyRecord {
    let record: SessionRecord?
    do {
      record = try await sessions.authenticate(token, now: EventCollector.now())
    } catch {
      throw Refusal(.serviceUnavailable, "", "storage unavailable", retryAfter: 5)
    }
    guard let record else { throw Refusal(.unauthorized, "session", "has ended; sign in again") }
    if request.method != .get && request.method != .head {
      let presented = request.headers[HTTPField.Name("X-CSRF-Token")!] ?? request.form.get("csrf")
      guard SessionRing.checks(csrf: presented, token: token) else {
        throw Refusal(.forbidden, "csrf", "a change made with a session needs the session's CSRF token")
      }
    }
    let key = record.principal
    return try Self.permit(key, scope)
  }

  private static func permit(_ record: KeyRecord, _ scope: KeyRecord.Scope) throws -> KeyRecord {
    guard record.scope.allows(scope) else {
      throw Refusal(
        .forbidden, "key",
        "is a \(record.scope.rawValue) key; this needs a\(scope == .admin ? "n" : "") \(scope.rawValue) key")
    }
    return record
  }
}

/// Body limits and gzip: the body, at most `limit` bytes as sent and
/// ``CollectorLimits/maximumDecompressedBytes`` inflated (``RequestBody``), into the context.
///
/// A write route's (``EventCollector/writeBody(limit:inflatedLimit:)``) first asks `isFull`
/// whether the store has room: when it has none, the request is refused (503, `Retry-After`)
/// before its body is read, as the store would refuse it after it was decoded.
struct BodyMiddleware: RouterMiddleware {
  typealias Context = CollectorRequestContext
  var limit: Int = CollectorLimits.maximumRequestBytes
  /// The most bytes a gzip body may inflate to (a vendor's own body limit where it has one).
  var inflatedLimit: Int = CollectorLimits.maximumDecompressedBytes
  /// Whether the store refuses writes now; `nil` for routes that write nothing.
  var isFull: (@Sendable () -> Bool)? = nil

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    if let isFull, isFull() { throw Refusal.busy }
    var context = context
    context.body = try await RequestBody.read(request, limit: limit, inflatedLimit: inflatedLimit)
    return try await next(request, context)
  }
}

extension RouterMethods where Context == CollectorRequestContext {
  /// A group of routes behind the given middleware, outermost first.
  func behind(_ middleware: any MiddlewareProtocol<Request, Response, Context>...) -> RouterGroup<Context> {
    let group = self.group()
    for item in middleware { group.add(middleware: item) }
    return group
  }
}
