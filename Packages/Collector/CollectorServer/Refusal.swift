import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// A request the collector refuses: the status, the field and the reason, and `Retry-After` when
/// retrying helps. The one error type of the HTTP layer: handlers and middleware throw it (or a
/// ``FieldError``, which is a 400), and ``SurfaceMiddleware`` answers it in its surface's form.
struct Refusal: HTTPResponseError {
  var status: HTTPResponse.Status
  var error: FieldError
  var retryAfter: Int?

  init(_ status: HTTPResponse.Status, _ field: String, _ reason: String, retryAfter: Int? = nil) {
    self.status = status
    self.error = FieldError(field: field, reason: reason)
    self.retryAfter = retryAfter
  }

  /// The refusal for anything a handler throws: refusals as they are, a ``FieldError`` as a 400, and
  /// anything else as a generic 400 (only refusals and field errors carry text meant for clients).
  init(_ thrown: any Error) {
    switch thrown {
    case let refusal as Refusal: self = refusal
    case let error as FieldError: self.init(.badRequest, error.field, error.reason)
    default: self.init(.badRequest, "", "the request could not be read")
    }
  }

  /// A 503 when the collector has no room for more rows now (the group committer's queue or the
  /// store's spool is full); nothing was stored, and the client retries after a second.
  static let busy = Refusal(.serviceUnavailable, "", "the collector is busy; retry", retryAfter: 1)

  /// A 503 when the store does not answer; nothing was done.
  static func storage(_ what: String = "nothing was stored") -> Refusal {
    Refusal(.serviceUnavailable, "", "storage unavailable; \(what)", retryAfter: 5)
  }

  var field: String { error.field }
  var reason: String { error.reason }
  var message: String { error.description }

  /// `{"error":{"field":…,"reason":…}}`, the native API's form.
  func response(from request: Request, context: some RequestContext) throws -> Response {
    response(body: BatchWriter.refusal(error))
  }

  /// This refusal's status and `Retry-After` with `body` (JSON).
  func response(body: [UInt8]) -> Response {
    answering(Response.json(status, body))
  }

  /// `response` (a route's own form of this refusal) with the refusal's `Retry-After`, if any.
  func answering(_ response: Response) -> Response {
    var response = response
    if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
    return response
  }

  /// `{"message":…}`.
  static func messageJSON(_ message: String) -> [UInt8] {
    var json = JSONWriter(capacity: message.utf8.count + 16)
    json.beginObject()
    json.member("message", message)
    json.endObject()
    return json.bytes
  }

}

extension Response {
  /// A JSON response.
  static func json(_ status: HTTPResponse.Status, _ body: [UInt8]) -> Response {
    Response(
      status: status, headers: [.contentType: "application/json"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
  }

  /// `{"message":…}`, SimpleAnalytics' form.
  static func message(_ status: HTTPResponse.Status, _ message: String) -> Response {
    .json(status, Refusal.messageJSON(message))
  }

  /// An HTML page.
  static func html(_ status: HTTPResponse.Status, _ text: String) -> Response {
    Response(
      status: status, headers: [.contentType: "text/html; charset=utf-8"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }
}

extension EventCollector {
  /// Runs `work` against the store: what a client got wrong (a ``FieldError`` or a ``Refusal``)
  /// passes through; any other failure is logged under `what` and answered 503 with "storage
  /// unavailable; retry", so the store's own text (SQL, paths) never reaches a response.
  func storing<T>(_ what: @autoclosure () -> String, _ work: () async throws -> T) async throws -> T {
    do {
      return try await work()
    } catch let error as FieldError {
      throw error
    } catch let error as Refusal {
      throw error
    } catch {
      logger.error("\(what()) failed: \(error)")
      throw Refusal.storage("retry")
    }
  }
}
