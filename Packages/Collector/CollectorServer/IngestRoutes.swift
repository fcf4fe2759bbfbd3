import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorWire
import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// A request the collector refuses: status, field, reason (and `Retry-After` when retrying helps).
struct Refusal: Error {
  var status: HTTPResponse.Status
  var field: String
  var reason: String
  var retryAfter: Int?
  /// The metric reason for the events it refuses.
  var metric: String

  init(_ status: HTTPResponse.Status, _ field: String, _ reason: String, retryAfter: Int? = nil, metric: String) {
    self.status = status
    self.field = field
    self.reason = reason
    self.retryAfter = retryAfter
    self.metric = metric
  }

  var message: String { field.isEmpty ? reason : "\(field): \(reason)" }
}

/// The HTTP surface: `POST /v1/batch`, `POST /v1/simple-analytics`, the vendor-compatible
/// `POST /mp/collect`, `POST /debug/mp/collect` and `POST /import` (VendorRoutes.swift),
/// `GET /health`, `GET /metrics`, `DELETE /v1/events` (admin), and `/bench/*` when enabled.
struct IngestRoutes: Sendable {
  let collector: EventCollector

  func register(on router: Router<BasicRequestContext>) {
    router.post("/v1/batch") { request, _ in await self.batch(request) }
    router.post("/v1/simple-analytics") { request, _ in await self.simpleAnalytics(request) }
    router.get("/health") { _, _ in await self.health() }
    router.get("/metrics") { _, _ in self.metricsText() }
    router.delete("/v1/events") { request, _ in await self.erase(request) }
    router.post("/mp/collect") { request, _ in await self.ga4(request, validationOnly: false) }
    router.post("/debug/mp/collect") { request, _ in await self.ga4(request, validationOnly: true) }
    router.post("/import") { request, _ in await self.mixpanelImport(request) }
    if collector.configuration.benchmarkRoutes {
      router.post("/bench/body") { request, _ in await self.benchBody(request) }
      router.post("/bench/jsondecoder") { request, _ in await self.benchJSONDecoder(request) }
    }
  }

  // MARK: Native batch

  func batch(_ request: Request) async -> Response {
    let route = "batch"
    do {
      let key = try await authenticate(Credentials.bearer(request), scope: .write)
      let body = try await Self.body(of: request)
      let decoded: DecodedBatch
      do {
        decoded = try BatchDecoder.decode(body)
      } catch {
        throw Refusal(.badRequest, error.field, error.reason, metric: "malformed")
      }
      let total = decoded.events.count + decoded.rejected.count
      guard total <= CollectorLimits.maximumEventsPerBatch else {
        throw Refusal(
          .contentTooLarge, "events", "more than \(CollectorLimits.maximumEventsPerBatch) events in one batch",
          metric: "too_large"
        )
      }
      collector.metrics.batch(size: total)
      let result: IngestResult
      do {
        result = try NativeIngest.rows(
          of: decoded, app: key.app, receivedAt: Self.now(), policy: collector.policy
        )
      } catch {
        throw Refusal(.badRequest, error.field, error.reason, metric: "invalid")
      }
      try await store(result, key: key, route: route)
      return respond(
        route, .ok, BatchWriter.response(BatchResponse(accepted: result.rows.events.count, rejected: result.rejected)))
    } catch {
      let refusal = Self.refusal(error)
      return respond(route, refusal, body: Self.errorJSON(refusal))
    }
  }

  // MARK: SimpleAnalytics

  func simpleAnalytics(_ request: Request) async -> Response {
    let route = "simple_analytics"
    do {
      let key = try await authenticate(request.form.secret("key"), scope: .write)
      let body = try await Self.body(of: request)
      let decoded: DecodedSimpleAnalytics
      do {
        decoded = try SimpleAnalyticsDecoder.decode(body)
      } catch {
        throw Refusal(.badRequest, error.field, error.reason, metric: "malformed")
      }
      let total = decoded.items.count + decoded.rejected.count
      guard total <= CollectorLimits.maximumEventsPerBatch,
        decoded.counters.count + decoded.rejectedCounters.count <= CollectorLimits.maximumCountersPerBatch
      else {
        throw Refusal(
          .contentTooLarge, "items", "more than \(CollectorLimits.maximumEventsPerBatch) items or counters",
          metric: "too_large"
        )
      }
      collector.metrics.batch(size: total)
      let result = SimpleAnalyticsIngest.rows(
        of: decoded, app: key.app, receivedAt: Self.now(), policy: collector.policy
      )
      // What a resend already had, read before the commit: the answer says what is new.
      let already: Int
      do {
        already = try await collector.store.storedEventIDs(app: key.app, among: result.rows.events.map(\.eventID)).count
      } catch {
        throw Refusal(
          .serviceUnavailable, "", "storage unavailable; nothing was stored", retryAfter: 5, metric: "storage")
      }
      try await store(result, key: key, route: route)
      let rejected = result.rejected + SimpleAnalyticsIngest.rejectedCounters(of: decoded)
      var message =
        "stored \(result.rows.events.count - already) items (\(already) already stored) "
        + "and \(result.rows.counters.count) counters"
      guard rejected.isEmpty else {
        // The SimpleAnalytics client deletes whatever a 2xx answered: a refusal must not be one. The
        // valid entries are committed (a resend of them stores nothing twice); the client keeps all.
        message +=
          "; refused \(rejected.count): "
          + rejected.prefix(20).map { "\($0.field): \($0.reason)" }
          .joined(separator: "; ")
        return respond(route, .unprocessableContent, Self.messageJSON(message))
      }
      return respond(route, .ok, Self.messageJSON(message))
    } catch {
      let refusal = Self.refusal(error)
      return respond(route, refusal, body: Self.messageJSON(refusal.message))
    }
  }

  /// Rate-limits, commits (2xx only after the commit) and counts.
  func store(_ result: IngestResult, key: KeyRecord, route: String) async throws {
    let cost = result.rows.events.count + result.rows.counters.count
    if let wait = collector.limiter.take(cost, key: key.id) {
      throw Refusal(
        .tooManyRequests, "", "rate limit of \(Int(collector.limiter.rate ?? 0)) events/s for this key",
        retryAfter: wait, metric: "rate_limited"
      )
    }
    do {
      try await collector.committer.commit(result.rows)
    } catch GroupCommitter.CommitError.overloaded {
      throw Refusal(.serviceUnavailable, "", "the collector is busy; retry", retryAfter: 1, metric: "overloaded")
    } catch {
      collector.logger.error("commit failed: \(error)")
      throw Refusal(
        .serviceUnavailable, "", "storage unavailable; nothing was stored", retryAfter: 5, metric: "storage")
    }
    collector.metrics.accepted(result.rows.events.count, route: route)
    let tooOld = result.rejected.count { collector.policy.isTooOld($0) }
    collector.metrics.rejected(result.rejected.count - tooOld, reason: "invalid")
    collector.metrics.rejected(tooOld, reason: "too_old")
  }

  // MARK: Health, metrics, erasure

  func health() async -> Response {
    do {
      try await collector.store.ping()
      let version = try await collector.store.schemaVersion()
      return respond("health", .ok, Array(#"{"status":"ok","store":"ready","schemaVersion":\#(version)}"#.utf8))
    } catch {
      collector.logger.error("health: the store does not answer: \(error)")
      return respond("health", .serviceUnavailable, Array(#"{"status":"unavailable","store":"not answering"}"#.utf8))
    }
  }

  func metricsText() -> Response {
    collector.metrics.request(route: "metrics", status: 200)
    return Response(
      status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: collector.metrics.exposition()))
    )
  }

  func erase(_ request: Request) async -> Response {
    let route = "erase"
    do {
      _ = try await authenticate(Credentials.bearer(request), scope: .admin)
      let parameters = request.form
      guard let app = parameters.get("app"), !app.isEmpty else {
        throw Refusal(.badRequest, "app", "is required", metric: "invalid")
      }
      // Checked before the store sees them: `deviceId=victim%00x` must not erase `victim`, and
      // `deviceId=%00` must not erase every row with an empty device id.
      try Identifier.check(app, field: "app")
      for field in ["deviceId", "userId"] {
        if let value = parameters.get(field) { try Identifier.check(value, field: field) }
      }
      guard
        let subject = ErasureSubject(app: app, deviceID: parameters.get("deviceId"), userID: parameters.get("userId"))
      else {
        throw Refusal(.badRequest, "deviceId", "deviceId or userId is required", metric: "invalid")
      }
      let deleted: Int
      do {
        deleted = try await collector.store.erase(subject)
      } catch {
        throw Refusal(
          .serviceUnavailable, "", "storage unavailable; nothing was erased", retryAfter: 5, metric: "storage")
      }
      collector.logger.notice("erased \(deleted) rows of one subject of app \(app)")
      return respond(route, .ok, Array(#"{"deleted":\#(deleted)}"#.utf8))
    } catch {
      let refusal = Self.refusal(error)
      return respond(route, refusal, body: Self.errorJSON(refusal))
    }
  }

  // MARK: Benchmark ceilings

  func benchBody(_ request: Request) async -> Response {
    do {
      let body = try await Self.body(of: request)
      return respond("bench_body", .ok, Array(#"{"bytes":\#(body.count)}"#.utf8))
    } catch {
      return respond("bench_body", Self.refusal(error), body: [])
    }
  }

  func benchJSONDecoder(_ request: Request) async -> Response {
    do {
      let body = try await Self.body(of: request)
      let batch = try JSONDecoder().decode(CollectorBatch.self, from: Data(body))
      return respond("bench_jsondecoder", .ok, Array(#"{"accepted":\#(batch.events.count)}"#.utf8))
    } catch {
      return respond("bench_jsondecoder", Refusal(.badRequest, "", "\(error)", metric: "malformed"), body: [])
    }
  }

  // MARK: Helpers

  func authenticate(_ key: String?, scope: KeyRecord.Scope) async throws -> KeyRecord {
    guard let key, !key.isEmpty else {
      throw Refusal(
        .unauthorized, "key",
        scope == .write
          ? "a write key is required (Authorization: Bearer <key>, or ?key= for SimpleAnalytics)"
          : "an admin key is required (Authorization: Bearer <key>)",
        metric: "unauthorized"
      )
    }
    let record: KeyRecord?
    do {
      record = try await collector.keyRing.authenticate(key)
    } catch {
      throw Refusal(.serviceUnavailable, "", "storage unavailable", retryAfter: 5, metric: "storage")
    }
    guard let record else { throw Refusal(.unauthorized, "key", "is not a valid key", metric: "unauthorized") }
    guard record.scope == scope else {
      throw Refusal(
        .forbidden, "key", "is a \(record.scope.rawValue) key; this route needs a \(scope.rawValue) key",
        metric: "unauthorized")
    }
    return record
  }

  /// The body, at most `limit` bytes as sent and 5 MB inflated (``RequestBody``).
  static func body(of request: Request, limit: Int = CollectorLimits.maximumRequestBytes) async throws -> [UInt8] {
    try await RequestBody.read(request, limit: limit)
  }

  static func refusal(_ error: any Error) -> Refusal {
    if let refusal = error as? Refusal { return refusal }
    // Only refusals carry text meant for clients; anything else is described generically.
    return Refusal(.badRequest, "", "the request could not be read", metric: "malformed")
  }

  func respond(_ route: String, _ status: HTTPResponse.Status, _ body: [UInt8]) -> Response {
    collector.metrics.request(route: route, status: status.code)
    return Response(
      status: status, headers: [.contentType: "application/json"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
    )
  }

  func respond(_ route: String, _ refusal: Refusal, body: [UInt8]) -> Response {
    var response = respond(route, refusal.status, body)
    if let wait = refusal.retryAfter { response.headers[.retryAfter] = String(wait) }
    return response
  }

  static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

  static func errorJSON(_ refusal: Refusal) -> [UInt8] {
    var json = JSONWriter(capacity: 128)
    json.beginObject()
    json.key("error")
    json.beginObject()
    json.key("field")
    json.string(refusal.field)
    json.key("reason")
    json.string(refusal.reason)
    json.endObject()
    json.endObject()
    return json.bytes
  }

  static func messageJSON(_ message: String) -> [UInt8] {
    var json = JSONWriter(capacity: message.utf8.count + 16)
    json.beginObject()
    json.key("message")
    json.string(message)
    json.endObject()
    return json.bytes
  }
}
