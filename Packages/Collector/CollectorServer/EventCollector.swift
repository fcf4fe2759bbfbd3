import CollectorClickHouse
public import CollectorIngest
import CollectorPostgres
public import CollectorReports
public import CollectorRuntime
import CollectorSQLite
public import CollectorStore
import Foundation
public import Hummingbird
public import Logging
import NIOCore
import ServiceLifecycle

/// A running collector's parts: the store, keys, rate limiter, group commit and metrics, and the
/// HTTP application that serves them.
///
/// ```swift
/// let (collector, report) = try await EventCollector.open(configuration, logger: logger)
/// for line in report.lines { print(line) }
/// try await collector.application { port in print("listening on \(port)") }.runService()
/// ```
public final class EventCollector: Sendable {
  /// The resolved configuration.
  public let configuration: CollectorConfiguration
  /// The event store.
  public let store: any EventStore
  /// Key authentication.
  public let keyRing: KeyRing
  /// Group commit in front of the store (or of the spool, when there is one).
  public let committer: GroupCommitter
  /// The durable ingest spool in front of the store, when configured (`spool-directory`).
  public let spool: SpooledEventStore?
  /// Metrics for `/metrics`.
  public let metrics: CollectorMetrics
  /// Per-key rate limiting.
  public let limiter: RateLimiter
  /// Event rules (age limit).
  public let policy: IngestPolicy
  /// Dashboard sessions.
  public let sessions: SessionRing
  /// The audit trail of admin actions.
  public let audit: AuditTrail
  /// Bounded concurrency and time for reports, on threads apart from ingestion.
  public let reportGate: ReportGate
  /// Sign-in attempts per client address.
  let signInLimiter: RateLimiter
  /// What was just stored, quarantined or reported dropped, for the dashboard's live page.
  let live = LiveFeed<LiveItem>()
  /// The store's reports (the engine's capability), or `nil` when the store serves none (the report
  /// API then answers 501).
  public let reports: (any ReportEngine)?
  let logger: Logger

  /// Wraps an open store and its reports (tests and embedders; ``open(_:logger:)`` builds both from
  /// the configuration), with `spool` (made with this collector's `metrics`) in front of the store
  /// for writes when given.
  public init(
    configuration: CollectorConfiguration, store: any EventStore, reports: (any ReportEngine)?, logger: Logger,
    metrics: CollectorMetrics = CollectorMetrics(), spool: SpooledEventStore? = nil
  ) {
    self.configuration = configuration
    self.store = store
    self.reports = reports
    self.logger = logger
    self.metrics = metrics
    self.spool = spool
    self.keyRing = KeyRing(store: store)
    self.committer = GroupCommitter(
      store: spool ?? store, metrics: metrics, maximumQueuedRows: configuration.maximumQueuedRows
    )
    self.limiter = RateLimiter(rate: configuration.rateLimit, clock: configuration.clock)
    self.policy = IngestPolicy(
      maximumEventAgeDays: configuration.maximumEventAgeDays, maximumFreeTextBytes: configuration.maximumFreeTextBytes,
      plans: configuration.plans)
    let security = configuration.security
    let keyRing = self.keyRing
    self.sessions = SessionRing(
      store: store, idleSeconds: security.sessionIdleSeconds, lifetimeSeconds: security.sessionLifetimeSeconds,
      keyIsActive: { id in try await keyRing.isActive(id: id) })
    self.audit = AuditTrail(store: store) { entry in
      logger.notice(
        "audit",
        metadata: [
          "actor": .string(entry.actor), "action": .string(entry.action), "detail": .string(entry.detail),
          "time": .stringConvertible(entry.time),
        ])
    }
    self.reportGate = ReportGate(
      concurrency: security.reportConcurrency, queue: security.reportQueue,
      budget: .milliseconds(Int64(security.reportTimeoutSeconds * 1000)))
    let perSecond = Double(security.signInAttemptsPerMinute) / 60
    self.signInLimiter = RateLimiter(
      rate: perSecond, burst: Double(security.signInAttemptsPerMinute), minimumBurst: 1, clock: configuration.clock)
  }

  /// Wraps an open SQL store, with its SQL reports.
  public convenience init(
    configuration: CollectorConfiguration, store: some EventStore & ReportQuerying, logger: Logger
  ) {
    self.init(configuration: configuration, store: store, reports: SQLReports(store: store), logger: logger)
  }

  /// What happened at start, to print: the storage, and keys generated for development.
  public struct StartupReport: Sendable {
    /// The storage in words.
    public var storage: String
    /// Keys generated because none was configured or stored (shown once; only hashes are kept).
    public var generatedKeys: [ProvisionedKey]

    /// The lines to print.
    public var lines: [String] {
      var lines = ["storage: \(storage)"]
      for key in generatedKeys {
        switch key.scope {
        case .write: lines.append("development write key for app \"\(key.app)\": \(key.key)")
        case .read: lines.append("development read key: \(key.key)")
        case .admin: lines.append("development admin key: \(key.key)")
        }
      }
      if !generatedKeys.isEmpty {
        lines.append("(printed once: only their hashes are stored. Configure keys with --write-keys app=key.)")
      }
      return lines
    }
  }

  /// Opens the configured store, migrates it, provisions the configured keys and, on a store that
  /// has none, generates a development write key (app `dev`) and admin key.
  public static func open(_ configuration: CollectorConfiguration, logger: Logger) async throws -> (
    EventCollector, StartupReport
  ) {
    let (store, reports) = try configuration.storage.open(logger: logger, creating: true)
    let description = configuration.storage.description
    try await store.migrate()
    let metrics = CollectorMetrics()
    let spool = try configuration.spoolDirectory.map { directory in
      try SpooledEventStore(
        directory: directory, base: store, maximumRows: configuration.spoolMaximumRows, metrics: metrics, logger: logger
      )
    }
    let collector = EventCollector(
      configuration: configuration, store: store, reports: reports, logger: logger, metrics: metrics, spool: spool)
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    try await collector.keyRing.provision(configuration.keys, now: now)
    try await collector.auditConfiguration(now: now)
    var generated: [ProvisionedKey] = []
    if configuration.keys.isEmpty, try await store.keys().isEmpty {
      generated = [
        ProvisionedKey(app: "dev", key: AccessKeys.generate(scope: .write), scope: .write),
        ProvisionedKey(app: "*", key: AccessKeys.generate(scope: .admin), scope: .admin),
      ]
      try await collector.keyRing.provision(generated, now: now)
    }
    return (collector, StartupReport(storage: description, generatedKeys: generated))
  }

  /// Records in the audit trail what the configuration changed since the last start: keys it
  /// provisions that the store did not hold, and a retention policy unlike the last one recorded.
  func auditConfiguration(now: Int64) async throws {
    let trail = try await audit.entries(limit: 1_000)
    let recorded = Set(trail.filter { $0.action == "key-provision" }.map(\.detail))
    for key in configuration.keys {
      let record = AccessKeys.record(for: key.key, app: key.app, scope: key.scope, now: now)
      let detail = "\(record.scope.rawValue) key \(record.id) for \(key.app)"
      if !recorded.contains(detail) {
        try await audit.record(actor: "collector", action: "key-provision", detail: detail, now: now)
      }
    }
    let retention = configuration.retention
    let perApp = retention.perApp.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    let policy =
      "default \(retention.defaultDays.map { "\($0) days" } ?? "forever"); per app: \(perApp.isEmpty ? "none" : perApp)"
    let last = trail.first { $0.action == "retention" }?.detail ?? "default forever; per app: none"
    if policy != last { try await audit.record(actor: "collector", action: "retention", detail: policy, now: now) }
  }

  /// The routes, one controller per surface: ingestion (``IngestController``), the vendor
  /// endpoints (``VendorController``), reports (``ReportController``), the dashboard
  /// (``DashboardController``) and operations (``OperationsController``: health, metrics, erasure, and
  /// the benchmark ceilings when enabled). Authentication, body limits and gzip, and error mapping are
  /// middleware (``KeyMiddleware``, ``BodyMiddleware``, ``SurfaceMiddleware``).
  public func router() -> Router<CollectorRequestContext> {
    let router = Router(context: CollectorRequestContext.self)
    IngestController(collector: self).register(on: router)
    VendorController(collector: self).register(on: router)
    SegmentController(collector: self).register(on: router)
    ReportController(collector: self).register(on: router)
    ClientDropController(collector: self).register(on: router)
    DashboardController(collector: self).register(on: router)
    OperationsController(collector: self).register(on: router)
    QuarantineController(collector: self).register(on: router)
    return router
  }

  /// The HTTP application with the collector's background services (retention, reconciliation,
  /// device sets; then on shutdown: stop accepting, finish requests, commit, close the store unless
  /// `closesStore` is false, for embedders that keep reading it). `onListening` receives the port.
  public func application(
    closesStore: Bool = true, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
  ) -> some ApplicationProtocol {
    Application(
      router: router(),
      server: configuration.server,
      configuration: configuration.applicationConfiguration,
      services: [
        StoreLifecycle(collector: self, closesStore: closesStore),
        RetentionJob(store: spool ?? store, policy: configuration.retention, logger: logger),
        ReconcileJob(store: store, logger: logger),
        DeviceSetJob(store: store, interval: .seconds(configuration.reportCacheIntervalSeconds), logger: logger),
      ],
      onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
      logger: logger
    )
  }

  /// Finishes queued commits, writes what the spool holds to the store, and closes the store.
  public func shutdown() async throws {
    await committer.shutdown()
    if let spool {
      try await spool.close()
    } else {
      try await store.close()
    }
  }
}

/// Keeps the store open while the server runs; on graceful shutdown (after the HTTP server has
/// drained), waits for queued commits and closes it.
struct StoreLifecycle: Service {
  let collector: EventCollector
  let closesStore: Bool

  func run() async throws {
    try? await gracefulShutdown()
    if closesStore {
      try await collector.shutdown()
    } else {
      await collector.committer.shutdown()
      try? await collector.spool?.flush()
    }
  }
}
