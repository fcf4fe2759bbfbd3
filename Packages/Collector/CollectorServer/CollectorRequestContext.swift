import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
public import Hummingbird
import Logging
import NIOCore

/// What the middleware learns about a request before its handler runs: the key it presented (after
/// ``KeyMiddleware``) and its body, read within limits and inflated (after ``BodyMiddleware``).
public struct CollectorRequestContext: RequestContext {
  public var coreContext: CoreRequestContextStorage
  /// The authenticated key, once ``KeyMiddleware`` has run.
  var key: KeyRecord?
  /// The body, once ``BodyMiddleware`` has run.
  var body: [UInt8] = []

  public init(source: ApplicationRequestContextSource) {
    self.coreContext = CoreRequestContextStorage(source: source)
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
      response = answer(Refusal(error))
    }
    metrics.request(route: route, status: Int(response.status.code))
    return response
  }
}

/// Where a route's clients present their key.
enum KeySource: Sendable {
  /// `Authorization: Bearer <key>`.
  case bearer
  /// `Authorization: Basic …` (``Credentials/basic(_:)``).
  case basic
  /// A query parameter (SimpleAnalytics' `key`, GA4's `api_secret`).
  case query(String)

  func key(in request: Request) -> String? {
    switch self {
    case .bearer: Credentials.bearer(request)
    case .basic: Credentials.basic(request)
    case .query(let name): request.form.secret(name)
    }
  }

  /// How to present a key here, for the 401.
  var hint: String {
    switch self {
    case .bearer: "Authorization: Bearer <key>"
    case .basic: "Authorization: Basic, the key as user name or password"
    case .query(let name): "?\(name)=<key>"
    }
  }
}

/// Authentication: the request's key must be a valid key of `scope` (401 without one or with an
/// unknown one, 403 for a key of the other scope, 503 when the store does not answer).
struct KeyMiddleware: RouterMiddleware {
  typealias Context = CollectorRequestContext
  let scope: KeyRecord.Scope
  let source: KeySource
  let keyRing: KeyRing

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    var context = context
    context.key = try await authenticate(source.key(in: request))
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
    guard record.scope == scope else {
      throw Refusal(.forbidden, "key", "is a \(record.scope.rawValue) key; this route needs a \(scope.rawValue) key")
    }
    return record
  }
}

/// Body limits and gzip: the body, at most `limit` bytes as sent and
/// ``CollectorLimits/maximumDecompressedBytes`` inflated (``RequestBody``), into the context.
struct BodyMiddleware: RouterMiddleware {
  typealias Context = CollectorRequestContext
  var limit: Int = CollectorLimits.maximumRequestBytes

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    var context = context
    context.body = try await RequestBody.read(request, limit: limit)
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
