public import Prometheus

/// The collector's metrics, in its own registry (no process-global state, so several collectors can
/// run in one process), served as Prometheus text at `/metrics`.
///
/// - `collector_requests_total{route,status}`
/// - `collector_events_accepted_total{route}`, `collector_events_duplicate_total`
/// - `collector_events_rejected_total{reason}` (`invalid`, `too_old`, `rate_limited`, `unauthorized`,
///   `too_large`, `storage`, `overloaded`, `malformed`)
/// - `collector_plan_violations_total{mode}`: stored events breaking a plan that warns
/// - `collector_batch_size_events` (events per request), `collector_commit_seconds` (one group commit),
///   `collector_commit_size_rows` (rows per group commit), `collector_queue_depth_rows` (rows waiting)
/// - `collector_spool_depth_rows`: rows the ingest spool acknowledged that the store has not taken yet
public final class CollectorMetrics: Sendable {
  /// The registry (for custom metrics).
  public let registry: PrometheusCollectorRegistry
  /// Rows waiting for a commit.
  public let queueDepth: Gauge
  /// Seconds per group commit.
  public let commitSeconds: DurationHistogram
  /// Rows per group commit.
  public let commitRows: ValueHistogram
  /// Events per request.
  public let batchSize: ValueHistogram
  /// Events skipped at commit because they were stored before.
  public let duplicates: Counter
  /// Rows in the ingest spool the store has not taken yet (``SpooledEventStore``).
  public let spoolDepth: Gauge

  /// A fresh registry with the collector's metrics.
  public init() {
    let registry = PrometheusCollectorRegistry()
    self.registry = registry
    queueDepth = registry.makeGauge(descriptor: Self.name("queue_depth", "rows", "Rows waiting for a group commit"))
    commitSeconds = registry.makeDurationHistogram(
      descriptor: Self.name("commit", "seconds", "Duration of one group commit"),
      buckets: [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
      ]
    )
    commitRows = registry.makeValueHistogram(
      descriptor: Self.name("commit_size", "rows", "Rows written by one group commit"),
      buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000]
    )
    batchSize = registry.makeValueHistogram(
      descriptor: Self.name("batch_size", "events", "Events per ingest request"),
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500]
    )
    duplicates = registry.makeCounter(
      descriptor: Self.name("events_duplicate", "total", "Events already stored (client retries), not stored again")
    )
    spoolDepth = registry.makeGauge(
      descriptor: Self.name("spool_depth", "rows", "Rows acknowledged from the ingest spool, not yet in the store"))
  }

  private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
    MetricNameDescriptor(namespace: "collector", metricName: metric, unitName: unit, helpText: help)
  }

  /// Records one request's number of events.
  public func batch(size: Int) {
    batchSize.record(Double(size))
  }

  /// Counts one answered request.
  public func request(route: String, status: Int) {
    registry.makeCounter(
      descriptor: Self.name("requests", "total", "Requests by route and status"),
      labels: [("route", route), ("status", String(status))]
    ).increment()
  }

  /// Counts accepted events.
  public func accepted(_ count: Int, route: String) {
    guard count > 0 else { return }
    registry.makeCounter(
      descriptor: Self.name("events_accepted", "total", "Events committed to the store"), labels: [("route", route)]
    ).increment(by: Int64(count))
  }

  /// Counts rejected events by reason.
  public func rejected(_ count: Int, reason: String) {
    guard count > 0 else { return }
    registry.makeCounter(
      descriptor: Self.name("events_rejected", "total", "Events not stored, by reason"), labels: [("reason", reason)]
    ).increment(by: Int64(count))
  }

  /// Counts entries kept in the quarantine, by route.
  public func quarantined(_ count: Int, route: String) {
    guard count > 0 else { return }
    registry.makeCounter(
      descriptor: Self.name("events_quarantined", "total", "Entries refused by the rules and kept in the quarantine"),
      labels: [("route", route)]
    ).increment(by: Int64(count))
  }

  /// Counts stored events that break a tracking plan that only warns (enforced plans' violations are
  /// quarantined, and counted by ``quarantined(_:route:)``).
  public func planWarnings(_ count: Int) {
    guard count > 0 else { return }
    registry.makeCounter(
      descriptor: Self.name("plan_violations", "total", "Stored events that break a tracking plan that warns"),
      labels: [("mode", "warn")]
    ).increment(by: Int64(count))
  }

  /// Counts SimpleAnalytics requests that could not be told from a resend (read as the reading that
  /// loses nothing; Docs/Collector.md).
  public func ambiguousSubmission() {
    registry.makeCounter(
      descriptor: Self.name(
        "simple_analytics_ambiguous", "total", "SimpleAnalytics requests that could not be told from a resend")
    ).increment()
  }

  /// The Prometheus text exposition.
  public func exposition() -> [UInt8] {
    var buffer: [UInt8] = []
    registry.emit(into: &buffer)
    return buffer
  }
}
