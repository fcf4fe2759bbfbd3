public import CollectorWire
public import CoreTracker
public import Delivery
public import Foundation
/// Service identifiers and limit policies come with every service.
@_exported public import ServiceSupport

extension DropReason {
  /// An event larger than the collector's 32 KB per event.
  public static let eventTooLarge = DropReason("event_too_large")
}

/// The in-house service: sends the native batch (`POST /v1/batch`, CollectorWire) to a collector,
/// through a durable outbox, in batches, with retries.
///
/// Each event is encoded once, on the tracker's worker, and stored with a reference to its context
/// (stored once per change in `<directory>/contexts`, ``RecordContexts``); batches group
/// consecutive records of one context (≤ 2500 events, ≤ 500 KB), are gzipped and carry `sentAt`
/// for the server's clock-skew correction. Counters (`tracker.count(...)`) are stored as increments
/// and sent as totals per name since the last send (SimpleAnalytics' counters). The collector's
/// partial-success answer is honoured: rejected events are dropped with `rejected_by_server`, the
/// rest counted delivered.
///
/// ```swift
/// let collector = try CollectorService(
///   endpoint: URL(string: "https://collector.example.com")!,
///   writeKey: "wk_live_…",
///   directory: applicationSupport.appendingPathComponent("tracking/collector")
/// )
/// let tracker = TYTracker(services: [collector])
/// ```
public final class CollectorService: QueuedService {
  public let id: ServiceID
  /// The delivery queue underneath (its outbox, its counts).
  public let queue: DeliveryQueue
  private let encoder: Locked<RecordEncoder>

  /// Record kinds in the outbox.
  enum RecordKind: UInt8 {
    case event = 2
    case counter = 3
    /// A drop report, sent in the next batch's `diagnostics`.
    case diagnostics = 4
  }

  /// Creates the service.
  ///
  /// - Parameters:
  ///   - endpoint: the collector's base URL; batches go to `<endpoint>/v1/batch`.
  ///   - writeKey: the app's write key, sent as `Authorization: Bearer <key>`.
  ///   - directory: a directory the service's outbox owns (created if needed).
  ///   - outbox: the outbox's bounds.
  ///   - batchSize: the most events per request (the collector's limit, 2500, unless lower).
  ///   - gzip: whether request bodies are gzipped (the collector accepts both).
  ///   - transport, retry, policy: delivery settings; defaults: URLSession, 1 s → 60 s back-off,
  ///     send every 100 events or 30 s.
  public init(
    id: ServiceID = .collector,
    endpoint: URL,
    writeKey: String,
    directory: URL,
    outbox: OutboxConfiguration = OutboxConfiguration(),
    batchSize: Int = CollectorLimits.maximumEventsPerBatch,
    gzip: Bool = true,
    transport: any HTTPTransport = URLSessionTransport(),
    retry: RetryPolicy = RetryPolicy(),
    policy: FlushPolicy = FlushPolicy()
  ) throws {
    self.id = id
    let contexts = RecordContexts(directory: directory.appendingPathComponent("contexts"))
    encoder = Locked(RecordEncoder(contexts: contexts))
    queue = DeliveryQueue(
      outbox: try Outbox.openRun(in: directory, configuration: outbox).outbox,
      format: CollectorFormat(
        endpoint: endpoint, writeKey: writeKey,
        maximumRecords: min(max(1, batchSize), CollectorLimits.maximumEventsPerBatch), acceptsGzip: gzip,
        contexts: contexts
      ),
      transport: transport,
      retry: retry,
      policy: policy
    )
  }

  public func receive(_ event: TrackedEvent) {
    let record = encoder.withLock { $0.event(event) }
    guard record.count - RecordFraming.prefixLength(record) <= CollectorLimits.maximumEventBytes else {
      queue.recordDrop(.eventTooLarge)
      return
    }
    queue.enqueue(kind: RecordKind.event.rawValue, timestamp: event.timestamp.milliseconds, payload: record)
  }

  /// Stores the increment; batches carry each counter's total since the last send.
  public func receive(_ counter: CounterIncrement) {
    let record = encoder.withLock { $0.counter(counter) }
    queue.enqueue(kind: RecordKind.counter.rawValue, timestamp: counter.timestamp.milliseconds, payload: record)
  }

  /// Stores the report; the next batch of its context carries it in `diagnostics`.
  public func receive(_ report: DropReport) {
    let record = encoder.withLock { $0.dropReport(report) }
    queue.enqueue(
      kind: RecordKind.diagnostics.rawValue, timestamp: report.timestamp.milliseconds, payload: record,
      countsTowardThreshold: false)
  }

}

extension Date {
  var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
