import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorVendors
import CollectorWire
import HTTPTypes
import Hummingbird
import WireJSON

/// Segment's Tracking API, so that an app on analytics-swift, analytics.js or analytics-kotlin
/// switches by changing its host: batches on `/v1/batch` (beside the native batch, told apart by
/// the body's `batch` list), `/v1/b` and `/b`, and one call on `/v1/track`, `/v1/identify`,
/// `/v1/screen`, `/v1/page`, `/v1/alias` and `/v1/group` (``SegmentIngest``).
///
/// The write key comes as Segment's clients send it: `Authorization: Basic` (the key as user name),
/// or the body's `writeKey`; a Bearer key works too. The answer is Segment's `{"success": true}`
/// once every call is stored or quarantined, with `stored` and the `quarantined` calls (index, field,
/// reason) beside it. Limits as Segment documents them: 32 KB for one call, 500 KB for a batch,
/// answered 400 past them.
struct SegmentController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    for path in ["/v1/b", "/b"] {
      router.behind(
        collector.surface("segment_batch", answer: Self.answer), collector.keys(.write, from: .segment),
        collector.writeBody()
      )
      .post(RouterPath(path)) { _, context in try await self.receive(context, call: nil) }
    }
    for call in SegmentCall.allCases {
      router.behind(
        collector.surface("segment_\(call.rawValue)", answer: Self.answer), collector.keys(.write, from: .segment),
        collector.writeBody(limit: SegmentIngest.maximumCallBytes)
      )
      .post(RouterPath("/v1/\(call.rawValue)")) { _, context in try await self.receive(context, call: call) }
    }
  }

  /// Whether a body posted to `/v1/batch` is Segment's batch (its `batch` list comes before any
  /// native `events`).
  static func isSegmentBatch(_ body: [UInt8]) -> Bool {
    JSONDocument.firstKey(of: body, among: ["batch", "events"]) == "batch"
  }

  /// Stores a batch (`call` is `nil`) or one call, answering Segment's way.
  func receive(_ context: CollectorRequestContext, call: SegmentCall?) async throws -> Response {
    guard case .object(let request) = try JSONDocument.parse(context.body) else {
      throw Refusal(.badRequest, "", "the body is not a JSON object")
    }
    var key = context.key
    if key == nil { key = try await collector.authenticate(bodyKey: request["writeKey"]?.string, .write) }
    guard let key else { throw Refusal(.unauthorized, "key", "a write key is required") }
    let receivedAt = EventCollector.now()
    let outcome = try SegmentIngest.outcome(
      of: request, call: call, app: key.app, receivedAt: receivedAt, policy: collector.policy)
    collector.metrics.batch(size: outcome.events.count + outcome.refused.count)
    let rows = StoreBatch(events: outcome.events, quarantined: outcome.quarantined)
    try await collector.commit(IngestResult(rows: rows, rejected: []), key: key, route: SegmentIngest.route)
    collector.metrics.rejected(outcome.refused.count, reason: "invalid")
    collector.metrics.quarantined(outcome.quarantined.count, route: SegmentIngest.route)
    let quarantined = outcome.refused.map { refused -> JSONValue in
      .object([
        "index": .int(Int64(refused.index)), "field": .string(refused.error.field),
        "reason": .string(refused.error.reason),
      ])
    }
    let answer: JSONValue = .object([
      "success": .bool(true), "stored": .int(Int64(outcome.events.count)), "quarantined": .array(quarantined),
    ])
    return .json(.ok, answer.json)
  }

  /// A refusal in Segment's terms: a body over its limit is a 400, as Segment answers it.
  static func answer(_ refusal: Refusal) -> Response {
    var refusal = refusal
    if refusal.status == .contentTooLarge { refusal.status = .badRequest }
    return refusal.response(body: BatchWriter.refusal(refusal.error))
  }
}
