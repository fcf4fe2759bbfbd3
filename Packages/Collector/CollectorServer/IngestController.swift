import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The native ingestion API: `POST /v1/batch` (the native batch, ``BatchDecoder``; a body whose
/// `batch` list comes first is Segment's, ``SegmentController``) and `POST /v1/simple-analytics`
/// (the SimpleAnalytics package's payload, key in `?key=`).
struct IngestController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    router.behind(collector.surface("batch"), collector.keys(.write, from: .segment), collector.writeBody())
      .post("/v1/batch") { _, context in
        if SegmentController.isSegmentBatch(context.body) {
          return try await SegmentController(collector: collector).receive(context, call: nil)
        }
        return try await self.batch(context)
      }
    router.behind(
      collector.surface("simple_analytics") { $0.response(body: Refusal.messageJSON($0.message)) },
      collector.keys(.write, from: .query("key")), collector.writeBody()
    )
    .post("/v1/simple-analytics") { _, context in try await self.simpleAnalytics(context) }
  }

  func batch(_ context: CollectorRequestContext) async throws -> Response {
    guard let key = context.key else {
      throw Refusal(.unauthorized, "key", "a write key is required (Authorization: Bearer <key>)")
    }
    let receivedAt = EventCollector.now()
    let decoded: DecodedBatch
    do {
      decoded = try BatchDecoder.decode(context.body)
    } catch {
      try await quarantineUnreadable(context.body, route: NativeQuarantine.route, key: key, error: error)
      throw error
    }
    let total = decoded.events.count + decoded.rejected.count
    guard total <= CollectorLimits.maximumEventsPerBatch else {
      throw Refusal(
        .contentTooLarge, "events", "more than \(CollectorLimits.maximumEventsPerBatch) events in one batch")
    }
    collector.metrics.batch(size: total)
    var result: IngestResult
    do {
      result = try NativeIngest.rows(of: decoded, app: key.app, receivedAt: receivedAt, policy: collector.policy)
    } catch {
      try await quarantineUnreadable(context.body, route: NativeQuarantine.route, key: key, error: error)
      throw error
    }
    result.rows.quarantined =
      NativeQuarantine.entries(result.rejected, body: context.body, app: key.app, receivedAt: receivedAt)
      + NativeQuarantine.entries(
        refusedDiagnostics: decoded.refusedDiagnostics, body: context.body, app: key.app, receivedAt: receivedAt)
    try await collector.commit(result, key: key, route: "batch")
    collector.metrics.quarantined(result.rows.quarantined.count, route: NativeQuarantine.route)
    let response = BatchResponse(accepted: result.rows.events.count, rejected: result.rejected)
    return .json(.ok, BatchWriter.response(response))
  }

  /// Keeps a body that could not be read as a request in the quarantine, with why; the request is
  /// still refused.
  func quarantineUnreadable(_ body: [UInt8], route: String, key: KeyRecord, error: FieldError) async throws {
    guard !body.isEmpty else { return }
    let entry = UnreadableBody.entry(
      body, route: route, app: key.app, receivedAt: EventCollector.now(), reason: error.description)
    try await collector.commit(
      IngestResult(rows: StoreBatch(quarantined: [entry]), rejected: []), key: key, route: route)
    collector.metrics.quarantined(1, route: route)
  }

  /// SimpleAnalytics: every entry is stored or quarantined before the 2xx (its client deletes what
  /// a 2xx answered and resends everything else forever); a resend is told from new entries by the
  /// device's remembered submissions (``SimpleAnalyticsSubmissions``).
  func simpleAnalytics(_ context: CollectorRequestContext) async throws -> Response {
    let key = try context.authenticatedKey()
    let receivedAt = EventCollector.now()
    let route = SimpleAnalyticsSubmissions.route
    let decoded: DecodedSimpleAnalytics
    do {
      decoded = try SimpleAnalyticsDecoder.decode(context.body)
    } catch {
      try await quarantineUnreadable(context.body, route: route, key: key, error: error)
      throw error
    }
    let total = decoded.items.count + decoded.rejected.count
    guard total <= CollectorLimits.maximumEventsPerBatch,
      decoded.counters.count + decoded.rejectedCounters.count <= CollectorLimits.maximumCountersPerBatch,
      let entries = RequestEntries(context.body, arrays: ["items", "counters"])
    else {
      throw Refusal(
        .contentTooLarge, "items", "more than \(CollectorLimits.maximumEventsPerBatch) items or counters")
    }
    collector.metrics.batch(size: total)
    let prior: [StoredSubmission]
    do {
      prior = try await collector.store.recentSubmissions(
        app: key.app, deviceID: decoded.context["device_id"] ?? "", limit: SimpleAnalyticsSubmissions.remembered)
    } catch {
      throw Refusal.storage()
    }
    let outcome = SimpleAnalyticsSubmissions.rows(
      of: decoded, entries: entries, app: key.app, receivedAt: receivedAt, policy: collector.policy, prior: prior)
    try await collector.commit(IngestResult(rows: outcome.rows, rejected: []), key: key, route: route)
    collector.metrics.quarantined(outcome.quarantined.count, route: route)
    if outcome.ambiguous { collector.metrics.ambiguousSubmission() }
    var message =
      "stored \(outcome.rows.events.count - outcome.resentItems) items (\(outcome.resentItems) already stored) "
      + "and \(outcome.rows.counters.count) counters"
    if !outcome.quarantined.isEmpty {
      message +=
        "; quarantined \(outcome.quarantined.count) (kept for a replay, see /v1/quarantine): "
        + outcome.quarantined.prefix(20).map { "\($0.field): \($0.reason)" }.joined(separator: "; ")
    }
    return .message(.ok, message)
  }
}
