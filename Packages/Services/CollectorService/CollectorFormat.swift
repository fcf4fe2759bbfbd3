import CollectorWire
import CoreTracker
import Delivery
import Foundation

/// Encodes records once: `[context prefix][event or counter JSON]` (``RecordFraming``).
///
/// The context JSON is encoded and stored (in `contexts`, when given) only when the context
/// changes, so an event costs one JSON write of its own fields and its record references the
/// context instead of repeating it.
struct RecordEncoder {
  /// Where contexts are stored once per change; `nil` puts each record's context inline.
  var contexts: RecordContexts?
  private var context: TrackingContext?
  private var contextPrefix: [UInt8] = []
  private var timeZone: TimeZone?

  init(contexts: RecordContexts? = nil) { self.contexts = contexts }

  mutating func event(_ event: TrackedEvent) -> [UInt8] {
    var json = JSONWriter(capacity: 256)
    json.beginObject()
    json.key("id")
    json.string(event.id.description)
    json.key("name")
    json.string(event.name)
    json.key("kind")
    json.string(event.kind.rawValue)
    json.key("timestamp")
    json.int(event.timestamp.milliseconds)
    json.key("utcOffsetMinutes")
    json.int(utcOffsetMinutes(event.context, at: event.timestamp))
    json.key("parameters")
    json.beginObject()
    for parameter in event.parameters {
      json.key(parameter.key)
      switch parameter.value {
      case .string(let value): json.string(value)
      case .int(let value): json.int(value)
      case .double(let value): json.double(value)
      case .bool(let value): json.bool(value)
      case .date(let value): json.string(ISO8601.string(from: value))
      }
    }
    json.endObject()
    json.key("anonymousId")
    json.string(event.anonymousID)
    if let userID = event.userID {
      json.key("userId")
      json.string(userID)
    }
    if let session = event.session {
      json.key("sessionId")
      json.int(session.id)
    }
    json.endObject()
    return framed(event.context, json.bytes)
  }

  mutating func counter(_ counter: CounterIncrement) -> [UInt8] {
    framed(counter.context, CounterTotal.body(for: counter))
  }

  private mutating func framed(_ context: TrackingContext, _ body: [UInt8]) -> [UInt8] {
    use(context)
    return RecordFraming.frame(prefix: contextPrefix, body: body)
  }

  private mutating func utcOffsetMinutes(_ context: TrackingContext, at date: Date) -> Int {
    use(context)
    return (timeZone?.secondsFromGMT(for: date) ?? 0) / 60
  }

  /// Re-encodes the context and looks up its time zone only when the context changes.
  private mutating func use(_ context: TrackingContext) {
    guard context != self.context else { return }
    self.context = context
    let json = Self.encode(context)
    contextPrefix = contexts?.prefix(for: json) ?? RecordFraming.inlinePrefix(json)
    timeZone = TimeZone(identifier: context.timeZone)
  }

  /// The context's fields as the native batch names them.
  static let contextFields: [(key: String, value: @Sendable (TrackingContext) -> String)] = [
    ("appName", { $0.appName }), ("appVersion", { $0.appVersion }), ("appBuild", { $0.appBuild }),
    ("osName", { $0.osName }),
    ("osVersion", { $0.osVersion }), ("platform", { $0.platform }), ("deviceModel", { $0.deviceModel }),
    ("locale", { $0.locale }),
    ("timeZone", { $0.timeZone }), ("libraryName", { $0.libraryName }), ("libraryVersion", { $0.libraryVersion }),
  ]

  static func encode(_ context: TrackingContext) -> [UInt8] { encode { $0(context) } }

  /// The context sent for records whose stored context is gone: every field present and empty.
  static let unknownContext = encode { _ in "" }

  private static func encode(_ value: (@Sendable (TrackingContext) -> String) -> String) -> [UInt8] {
    var json = JSONWriter(capacity: 320)
    json.beginObject()
    for field in contextFields {
      json.key(field.key)
      json.string(value(field.value))
    }
    json.endObject()
    return json.bytes
  }
}

/// The native batch: records of one context, events in order, counters summed per name.
struct CollectorFormat: BatchFormat {
  let endpoint: URL
  let writeKey: String
  let maximumRecords: Int
  let acceptsGzip: Bool
  /// Where referenced contexts are stored.
  let contexts: RecordContexts?
  /// Room for the envelope and the context inside the 500 KB request limit.
  var maximumBytes: Int { CollectorLimits.maximumRequestBytes - 8 * 1024 }

  func batchLength(_ records: ArraySlice<OutboxRecord>) -> Int { RecordFraming.batchLength(records) }

  func request(for records: ArraySlice<OutboxRecord>, sentAt: Date) -> HTTPRequest {
    let events = records.filter { $0.kind == CollectorService.RecordKind.event.rawValue }.map(\.payload)
    return HTTPRequest(
      url: endpoint.appendingPathComponent("v1/batch"),
      headers: ["Content-Type": "application/json", "Authorization": "Bearer \(writeKey)"],
      body: Self.body(
        context: records.first.map { contexts?.context(of: $0.payload) ?? Self.inlineContext($0.payload) },
        events: events,
        counters: CounterTotal.totals(of: records, kind: CollectorService.RecordKind.counter.rawValue),
        sentAt: sentAt)
    )
  }

  /// The record's inline context, or the all-empty one when it references a context that is gone.
  static func inlineContext(_ record: [UInt8]) -> [UInt8] {
    RecordFraming.reference(record) == nil ? Array(RecordFraming.context(record)) : RecordEncoder.unknownContext
  }

  /// The native batch: `sentAt`, the records' shared context, their events and counter totals.
  static func body(context: [UInt8]?, events: [[UInt8]], counters: [CounterTotal], sentAt: Date) -> [UInt8] {
    var json = JSONWriter(capacity: events.reduce(256) { $0 + $1.count })
    json.beginObject()
    json.key("sentAt")
    json.int(sentAt.milliseconds)
    json.key("context")
    if let context {
      json.raw(context)
    } else {
      json.null()
    }
    json.key("events")
    json.beginArray()
    for event in events { json.raw(RecordFraming.body(event)) }
    json.endArray()
    json.key("counters")
    json.beginArray()
    for counter in counters {
      json.beginObject()
      json.key("name")
      json.string(counter.name)
      json.key("count")
      json.int(counter.count)
      json.key("firstCountedAt")
      json.int(counter.firstCountedAt)
      if let install = counter.anonymousId {
        json.key("anonymousId")
        json.string(install)
      }
      if let id = counter.id {
        json.key("id")
        json.string(id)
      }
      json.endObject()
    }
    json.endArray()
    json.endObject()
    return json.bytes
  }

  /// 2xx with the partial-success body: rejected events are dropped, the rest delivered.
  func outcome(of response: HTTPResponse, for records: ArraySlice<OutboxRecord>) -> DeliveryOutcome {
    let outcome = RetryPolicy.outcome(status: response.status, headers: response.headers)
    guard outcome == .delivered,
      let answer = try? JSONDecoder().decode(BatchResponse.self, from: Data(response.body)),
      !answer.rejected.isEmpty
    else { return outcome }
    return .partial(
      rejected: Dictionary(answer.rejected.map { ($0.index, $0.reason) }, uniquingKeysWith: { first, _ in first }))
  }
}
