import CollectorIngest
import CollectorRuntime
import CollectorSQLite
public import CollectorServer
import CollectorService
import CollectorStore
import CoreTracker
import Delivery
import FirebaseService
public import Foundation
import Hummingbird
import Logging
import MixpanelService
import ServiceLifecycle
import UnixSignals

/// A collector inside the process: SQLite in a folder, an ephemeral port on 127.0.0.1, one write
/// key per product and service (each its own app in the store) and an admin key for the dashboard,
/// all made for this run (the store keeps only their hashes).
public final class EmbeddedCollector: Sendable {
  /// The collector (its store, its reports).
  public let collector: EventCollector
  /// Where it listens.
  public let url: URL
  /// Write keys by app (`ty`, `ty-firebase`, `ty-mixpanel`, `dl`, ...).
  public let keys: [String: String]
  /// An admin key: reads reports and the dashboard.
  public let adminKey: String
  private let group: ServiceGroup
  private let server: Task<Void, any Error>

  private init(
    collector: EventCollector, url: URL, keys: [String: String], adminKey: String, group: ServiceGroup,
    server: Task<Void, any Error>
  ) {
    self.collector = collector
    self.url = url
    self.keys = keys
    self.adminKey = adminKey
    self.group = group
    self.server = server
  }

  /// Starts a collector on `dataDirectory/collector.sqlite`; with `stopsOnSignal`, SIGINT and SIGTERM
  /// stop it gracefully.
  public static func start(dataDirectory: URL, apps: [String], stopsOnSignal: Bool) async throws -> EmbeddedCollector {
    try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
    var configuration = CollectorConfiguration()
    configuration.port = 0
    configuration.storage = SQLiteStorage(
      path: dataDirectory.appendingPathComponent("collector.sqlite").path, durability: .normal)
    configuration.rateLimit = nil
    var keys: [String: String] = [:]
    for app in apps { keys[app] = "demo-\(app)-\(UUID().uuidString)" }
    let adminKey = "demo-admin-\(UUID().uuidString)"
    configuration.keys =
      keys.map { ProvisionedKey(app: $0.key, key: $0.value, scope: .write) }
      + [ProvisionedKey(app: "*", key: adminKey, scope: .admin)]
    var quiet = Logger(label: "shop-demo.collector")
    quiet.logLevel = .warning
    let (collector, _) = try await EventCollector.open(configuration, logger: quiet)
    let (ports, listening) = AsyncStream<Int>.makeStream()
    let group = ServiceGroup(
      configuration: .init(
        services: [collector.application(closesStore: false) { listening.yield($0) }],
        gracefulShutdownSignals: stopsOnSignal ? [.sigterm, .sigint] : [], logger: quiet))
    let server = Task { try await group.run() }
    var port = 0
    for await value in ports {
      port = value
      break
    }
    return EmbeddedCollector(
      collector: collector, url: URL(string: "http://127.0.0.1:\(port)")!, keys: keys, adminKey: adminKey,
      group: group, server: server)
  }

  /// The collector, Firebase and Mixpanel services of `product` (`ty`, `dl`), pointed at this
  /// collector, with their outboxes under `outboxes`.
  func services(_ product: String, outboxes: URL) throws -> (any TrackerService, [any TrackerService]) {
    let policy = FlushPolicy(count: 500, interval: 5, flushTimeout: 30)
    // Simulated weeks are a backfill: keep records for as long as the collector accepts events (30 days).
    let retry = RetryPolicy(initialDelay: 0.2, maximumDelay: 2, maximumEventAge: 31 * 86_400)
    let directory = outboxes.appendingPathComponent(product)
    return (
      try CollectorService(
        endpoint: url, writeKey: keys[product]!, directory: directory.appendingPathComponent("collector"),
        retry: retry, policy: policy),
      [
        try FirebaseService(
          firebaseAppID: "1:5120:ios:\(product)", apiSecret: keys["\(product)-firebase"]!,
          directory: directory.appendingPathComponent("firebase"), host: url, retry: retry, policy: policy),
        try MixpanelService(
          mode: .projectToken(keys["\(product)-mixpanel"]!), directory: directory.appendingPathComponent("mixpanel"),
          host: url, retry: retry, policy: policy),
      ]
    )
  }

  /// The dashboard's sign-in page, going on to `path` once signed in (the admin key is typed into
  /// its form: a key never goes in a URL).
  public func dashboardLink(_ path: String = "/") -> String {
    let next = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/"
    return "\(url.absoluteString)/login?next=\(next)"
  }

  /// Stops gracefully (finishing requests and commits) and closes the store.
  public func stop() async throws {
    await group.triggerGracefulShutdown()
    try await server.value
    try await collector.shutdown()
  }

  /// Waits until a signal stops the server (SIGINT, SIGTERM), then closes the store.
  public func waitUntilStopped() async throws {
    try await server.value
    try await collector.shutdown()
  }
}
