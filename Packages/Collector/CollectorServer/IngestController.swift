import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The native ingestion API: `POST /v1/batch` (the native batch, ``BatchDecoder``) and
/// `POST /v1/simple-analytics` (the SimpleAnalytics package's payload, key in `?key=`).
struct IngestController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    router.behind(collector.surface("batch"), collector.keys(.write, from: .bearer), BodyMiddleware())
      .post("/v1/batch") { _, context in try await self.batch(context) }
    router.behind(
      collector.surface("simple_analytics") { $0.response(body: Refusal.messageJSON($0.message)) },
      collector.keys(.write, from: .query("key")), BodyMiddleware()
    )
    .post("/v1/simple-analytics") { _, context in try await self.simpleAnalytics(context) }
  }

  func batch(_ context: CollectorRequestContext) async throws -> Response {
    let key = try context.authenticatedKey()
    let decoded = try BatchDecoder.decode(context.body)
    let total = decoded.events.count + decoded.rejected.count
    guard total <= CollectorLimits.maximumEventsPerBatch else {
      throw Refusal(
        .contentTooLarge, "events", "more than \(CollectorLimits.maximumEventsPerBatch) events in one batch")
    }
    collector.metrics.batch(size: total)
    let result = try NativeIngest.rows(
      of: decoded, app: key.app, receivedAt: EventCollector.now(), policy: collector.policy)
    try await collector.commit(result, key: key, route: "batch")
    let response = BatchResponse(accepted: result.rows.events.count, rejected: result.rejected)
    return .json(.ok, BatchWriter.response(response))
  }

  func simpleAnalytics(_ context: CollectorRequestContext) async throws -> Response {
    let key = try context.authenticatedKey()
    let decoded = try SimpleAnalyticsDecoder.decode(context.body)
    let total = decoded.items.count + decoded.rejected.count
    guard total <= CollectorLimits.maximumEventsPerBatch,
      decoded.counters.count + decoded.rejectedCounters.count <= CollectorLimits.maximumCountersPerBatch
    else {
      throw Refusal(
        .contentTooLarge, "items", "more than \(CollectorLimits.maximumEventsPerBatch) items or counters")
    }
    collector.metrics.batch(size: total)
    let result = SimpleAnalyticsIngest.rows(
      of: decoded, app: key.app, receivedAt: EventCollector.now(), policy: collector.policy)
    // What a resend already had, read before the commit: the answer says what is new.
    let already: Int
    do {
      already = try await collector.store.storedEventIDs(app: key.app, among: result.rows.events.map(\.eventID)).count
    } catch {
      throw Refusal.storage()
    }
    try await collector.commit(result, key: key, route: "simple_analytics")
    let rejected = result.rejected + SimpleAnalyticsIngest.rejectedCounters(of: decoded)
    var message =
      "stored \(result.rows.events.count - already) items (\(already) already stored) "
      + "and \(result.rows.counters.count) counters"
    guard rejected.isEmpty else {
      // The SimpleAnalytics client deletes whatever a 2xx answered: a refusal must not be one. The
      // valid entries are committed (a resend of them stores nothing twice); the client keeps all.
      message +=
        "; refused \(rejected.count): "
        + rejected.prefix(20).map { "\($0.field): \($0.reason)" }.joined(separator: "; ")
      return .message(.unprocessableContent, message)
    }
    return .message(.ok, message)
  }
}
