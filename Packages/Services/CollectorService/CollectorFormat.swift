import CollectorWire
import CoreTracker
import Delivery
import Foundation
import ServiceSupport

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
    var json = EventWriter(
      id: event.id.description, name: event.name, kind: event.kind.rawValue, timestamp: event.timestamp.milliseconds,
      utcOffsetMinutes: utcOffsetMinutes(event.context, at: event.timestamp))
    for parameter in event.parameters {
      switch parameter.value {
      case .string(let value): json.parameter(parameter.key, string: value)
      case .int(let value): json.parameter(parameter.key, int: Int64(value))
      case .double(let value): json.parameter(parameter.key, double: value)
      case .bool(let value): json.parameter(parameter.key, bool: value)
      case .date(let value): json.parameter(parameter.key, string: ISO8601.string(from: value))
      case .list, .object: json.parameter(parameter.key, parameter.value.wire)
      }
    }
    return framed(
      event.context, json.finish(anonymousId: event.anonymousID, userId: event.userID, sessionId: event.session?.id))
  }

  mutating func dropReport(_ report: DropReport) -> [UInt8] {
    let wire = CollectorDropReport(
      id: report.id, timestamp: report.timestamp.milliseconds, anonymousId: report.anonymousID,
      dropped: report.entries.map {
        CollectorDropReport.Dropped(service: $0.service?.rawValue, reason: $0.reason.rawValue, count: Int64($0.count))
      })
    return framed(report.context, BatchWriter.dropReport(wire))
  }

  mutating func counter(_ counter: CounterIncrement) -> [UInt8] {
    framed(counter.context, CollectorCounter.recordBody(for: counter))
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

  /// The wire context of the tracker's context, encoded.
  static func encode(_ context: TrackingContext) -> [UInt8] {
    BatchWriter.context(EventContext(context))
  }

  /// The context sent for records whose stored context is gone: every field present and empty.
  static let unknownContext = BatchWriter.context(EventContext())
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
        counters: CollectorCounter.totals(of: records, kind: CollectorService.RecordKind.counter.rawValue),
        diagnostics: records.filter { $0.kind == CollectorService.RecordKind.diagnostics.rawValue }.map(\.payload),
        sentAt: sentAt)
    )
  }

  /// The ids of the event records: each event's JSON starts with its id (``EventWriter``).
  func eventIDs(in records: ArraySlice<OutboxRecord>) -> [String] {
    records.filter { $0.kind == CollectorService.RecordKind.event.rawValue }.compactMap { record in
      let body = RecordFraming.body(record.payload)
      let prefix = Array(#"{"id":""#.utf8)
      guard body.starts(with: prefix) else { return nil }
      let start = body.startIndex + prefix.count
      guard let end = body[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
      return String(decoding: body[start..<end], as: UTF8.self)
    }
  }

  /// Drop reports are not events: they count neither as delivered nor as dropped.
  func countsAsEvent(_ record: OutboxRecord) -> Bool {
    record.kind != CollectorService.RecordKind.diagnostics.rawValue
  }

  /// The record's inline context, or the all-empty one when it references a context that is gone.
  static func inlineContext(_ record: [UInt8]) -> [UInt8] {
    RecordFraming.reference(record) == nil ? Array(RecordFraming.context(record)) : RecordEncoder.unknownContext
  }

  /// The native batch: `sentAt`, the records' shared context, their events and counter totals.
  static func body(
    context: [UInt8]?, events: [[UInt8]], counters: [CollectorCounter], diagnostics: [[UInt8]] = [], sentAt: Date
  ) -> [UInt8] {
    BatchWriter.batch(
      sentAt: sentAt.milliseconds, context: context ?? RecordEncoder.unknownContext,
      events: events.map(RecordFraming.body),
      counters: counters, diagnostics: diagnostics.map(RecordFraming.body))
  }

  /// 2xx with the partial-success body: rejected events are dropped, the rest delivered.
  func outcome(of response: HTTPResponse, for records: ArraySlice<OutboxRecord>) -> DeliveryOutcome {
    let outcome = RetryPolicy.outcome(status: response.status, headers: response.headers)
    // A refusal says why (`{"error":{"field":…,"reason":…}}`): the reason goes with the drop.
    if case .drop(let reason, let error) = outcome,
      let refusal = try? JSONDecoder().decode(Refusal.self, from: Data(response.body))
    {
      let field = refusal.error.field.map { $0.isEmpty ? "" : "\($0): " } ?? ""
      return .drop(reason, error: "\(error): \(field)\(refusal.error.reason)")
    }
    guard outcome == .delivered,
      let answer = try? JSONDecoder().decode(BatchResponse.self, from: Data(response.body)),
      !answer.rejected.isEmpty
    else { return outcome }
    return .partial(
      rejected: Dictionary(
        answer.rejected.map { ($0.index, "\($0.field): \($0.reason)") }, uniquingKeysWith: { first, _ in first }))
  }
}

/// The collector's answer to a request it refuses as a whole.
private struct Refusal: Decodable {
  struct Problem: Decodable {
    var field: String?
    var reason: String
  }
  var error: Problem
}

extension EventContext {
  /// The wire context of the tracker's context, field by field. The `switch` is exhaustive: a field
  /// added to ``ContextField`` does not compile until it is mapped here; a field added to
  /// `TrackingContext` alone fails `CollectorServiceTests` (the two declare the same names).
  init(_ context: TrackingContext) {
    self.init { field in
      switch field {
      case .appName: context.appName
      case .appVersion: context.appVersion
      case .appBuild: context.appBuild
      case .osName: context.osName
      case .osVersion: context.osVersion
      case .platform: context.platform
      case .deviceModel: context.deviceModel
      case .locale: context.locale
      case .timeZone: context.timeZone
      case .libraryName: context.libraryName
      case .libraryVersion: context.libraryVersion
      case .environment: context.environment
      }
    }
  }
}
