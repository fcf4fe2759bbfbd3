import CollectorWire
public import CoreTracker
public import Delivery
public import Foundation
/// Service identifiers and limit policies come with every service.
@_exported public import ServiceSupport

/// Speaks the SimpleAnalytics payload to any compatible endpoint (a SimpleAnalytics server, or our
/// collector's `/v1/simple-analytics`), with its semantics and a durable outbox underneath.
///
/// As SimpleAnalytics does: every event becomes an item (`description` = the event name,
/// `parameters` as strings, `timestamp` in ISO 8601 with the device's offset); counters are sent as
/// totals since the last successful submit; a submit happens when items and new counters reach the
/// threshold (100), the threshold rises by 20 after each failed submit and is reset by a success;
/// any 2xx is success, anything else is retried; ``sendSoon()`` submits on going to the background,
/// `flush()` on demand. Unlike SimpleAnalytics, which keeps everything in memory, what waits is in
/// the outbox, so a crash loses nothing.
///
/// ```swift
/// let analytics = try SimpleAnalyticsService(
///   endpoint: URL(string: "https://collector.example.com/v1/simple-analytics?key=wk_live_…")!,
///   deviceID: installID,
///   directory: applicationSupport.appendingPathComponent("tracking/simple-analytics")
/// )
/// ```
public final class SimpleAnalyticsService: QueuedService {
  public let id: ServiceID
  /// The delivery queue underneath.
  public let queue: DeliveryQueue
  private let state: Locked<EncoderState>

  enum RecordKind: UInt8 {
    case item = 2
    case counter = 3
  }

  struct EncoderState {
    let deviceID: String
    let contexts: RecordContexts
    var context: TrackingContext?
    var contextPrefix: [UInt8] = []
    var timeZone: TimeZone?
    var pendingCounters: Set<String> = []
  }

  /// Creates the service.
  ///
  /// - Parameters:
  ///   - endpoint: the full URL the payload is posted to (a key, if any, travels in it: the
  ///     SimpleAnalytics client sends no headers).
  ///   - deviceID: the `device_id` to send; SimpleAnalytics leaves it to the app and allows `""`.
  ///   - directory: a directory the outbox owns.
  ///   - threshold: items and new counters that trigger a submit (SimpleAnalytics: 100).
  ///   - failureIncrement: how much a failed submit raises the threshold (SimpleAnalytics: 20).
  public init(
    id: ServiceID = .simpleAnalytics,
    endpoint: URL,
    deviceID: String,
    directory: URL,
    threshold: Int = 100,
    failureIncrement: Int = 20,
    outbox: OutboxConfiguration = OutboxConfiguration(),
    transport: any HTTPTransport = URLSessionTransport(),
    retry: RetryPolicy = RetryPolicy(),
    flushTimeout: TimeInterval = 10
  ) throws {
    self.id = id
    let contexts = RecordContexts(directory: directory.appendingPathComponent("contexts"))
    state = Locked(EncoderState(deviceID: deviceID, contexts: contexts))
    queue = DeliveryQueue(
      outbox: try Outbox.openRun(in: directory, configuration: outbox).outbox,
      format: SimpleAnalyticsFormat(endpoint: endpoint, contexts: contexts),
      transport: transport,
      retry: retry,
      policy: FlushPolicy(
        count: threshold, failureIncrement: failureIncrement, interval: nil, flushTimeout: flushTimeout
      )
    )
  }

  public func receive(_ event: TrackedEvent) {
    let record = state.withLock { state -> [UInt8] in
      let context = state.contextPrefix(for: event.context)
      var item = SimpleAnalyticsItem(
        description: event.name,
        timestamp: ISO8601.string(
          from: event.timestamp, offsetSeconds: state.timeZone?.secondsFromGMT(for: event.timestamp) ?? 0
        )
      )
      if !event.parameters.isEmpty {
        item.parameters = SimpleAnalyticsFlattening.flattened(event.parameters)
      }
      return RecordFraming.frame(prefix: context, body: (try? JSONEncoder().encode(item)).map(Array.init) ?? [])
    }
    queue.enqueue(kind: RecordKind.item.rawValue, timestamp: event.timestamp.milliseconds, payload: record)
  }

  /// Stores the increment; a counter already waiting to be sent does not count toward the
  /// threshold again (as in SimpleAnalytics).
  public func receive(_ counter: CounterIncrement) {
    let waiting = queue.statistics().queued
    let (record, isNew) = state.withLock { state -> ([UInt8], Bool) in
      if waiting == 0 { state.pendingCounters.removeAll() }
      let isNew = state.pendingCounters.insert(counter.name).inserted
      return (
        RecordFraming.frame(
          prefix: state.contextPrefix(for: counter.context), body: CollectorCounter.recordBody(for: counter)),
        isNew
      )
    }
    queue.enqueue(
      kind: RecordKind.counter.rawValue, timestamp: counter.timestamp.milliseconds, payload: record,
      countsTowardThreshold: isNew
    )
  }

}

extension SimpleAnalyticsService.EncoderState {
  /// The record prefix that names the payload's top-level context fields, encoded and stored once
  /// per context.
  fileprivate mutating func contextPrefix(for context: TrackingContext) -> [UInt8] {
    if context != self.context {
      self.context = context
      timeZone = TimeZone(identifier: context.timeZone)
      let header = SimpleAnalyticsPayload(
        deviceID: deviceID, appName: context.appName, appVersion: context.appBuild,
        systemVersion: context.osVersion, platform: SimpleAnalyticsFormat.platform(of: context),
        items: [], counters: []
      )
      contextPrefix = contexts.prefix(for: (try? JSONEncoder().encode(header)).map(Array.init) ?? [])
    }
    return contextPrefix
  }
}

extension Date {
  var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}

/// The SimpleAnalytics payload: the context once at the top level, items, counter totals.
struct SimpleAnalyticsFormat: BatchFormat {
  let endpoint: URL
  /// Where the records' contexts are stored.
  let contexts: RecordContexts
  var maximumRecords: Int { 1000 }
  var maximumBytes: Int { 1 << 20 }
  var acceptsGzip: Bool { false }

  func batchLength(_ records: ArraySlice<OutboxRecord>) -> Int { RecordFraming.batchLength(records) }

  func request(for records: ArraySlice<OutboxRecord>, sentAt: Date) -> HTTPRequest {
    let decoder = JSONDecoder()
    var payload =
      records.first.flatMap {
        contexts.context(of: $0.payload).flatMap { try? decoder.decode(SimpleAnalyticsPayload.self, from: Data($0)) }
      }
      ?? SimpleAnalyticsPayload(
        deviceID: "", appName: "", appVersion: "", systemVersion: "", platform: "", items: [], counters: []
      )
    let timeZone = TimeZone.current
    payload.items = records.filter { $0.kind == SimpleAnalyticsService.RecordKind.item.rawValue }.compactMap {
      try? decoder.decode(SimpleAnalyticsItem.self, from: Data(RecordFraming.body($0.payload)))
    }
    payload.counters = CollectorCounter.totals(of: records, kind: SimpleAnalyticsService.RecordKind.counter.rawValue)
      .map {
        let first = Date(timeIntervalSince1970: Double($0.firstCountedAt) / 1000)
        return SimpleAnalyticsCounter(
          name: $0.name, count: Int($0.count),
          timestamp: ISO8601.string(from: first, offsetSeconds: timeZone.secondsFromGMT(for: first))
        )
      }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return HTTPRequest(
      url: endpoint,
      headers: ["Content-Type": "application/json"],
      body: (try? encoder.encode(payload)).map(Array.init) ?? []
    )
  }

  /// SimpleAnalytics resends on any non-2xx status and on transport errors.
  func outcome(of response: HTTPResponse, for records: ArraySlice<OutboxRecord>) -> DeliveryOutcome {
    (200..<300).contains(response.status)
      ? .delivered
      : .retry(
        after: response.headers["retry-after"].flatMap(RetryPolicy.retryAfterSeconds), error: "HTTP \(response.status)"
      )
  }

  /// SimpleAnalytics' platform names: `iOS (iPhone)`, `iOS (iPad)`, `macOS`, or the platform as is.
  static func platform(of context: TrackingContext) -> String {
    switch context.platform {
    case "iOS" where context.deviceModel.hasPrefix("iPad"): "iOS (iPad)"
    case "iOS": "iOS (iPhone)"
    default: context.platform
    }
  }
}
