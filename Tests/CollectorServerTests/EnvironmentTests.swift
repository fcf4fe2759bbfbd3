import CollectorIngest
import CollectorReports
import CollectorRuntime
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// Environments kept apart end to end, over HTTP on every engine: what a batch names, what a key
/// bound to an environment decides, and reports, `/v1/apps`, the dashboard and erasure by
/// environment.
@Suite("Environments")
struct EnvironmentTests {
  static let productionKey = "test-production-key-0123456789"
  static let developmentKey = "test-development-key-0123456789"

  static func collector(_ engine: LiveTests.Engine) async throws -> EventCollector {
    let collector = try await makeCollector(store: { engine.store($0, "environments") })
    try await collector.keyRing.provision(
      [
        ProvisionedKey(app: "ty@production", key: productionKey, scope: .write),
        ProvisionedKey(app: "ty@development", key: developmentKey, scope: .write),
      ], now: 0)
    return collector
  }

  /// A native batch of `count` events from `device`, naming `environment` (none when `nil`).
  static func send(
    _ client: some TestClientProtocol, key: String, environment: String?, ids: [String], device: String,
    at time: Int64? = nil
  ) async throws -> (HTTPResponse.Status, String) {
    var context = Batches.context
    if let environment { context[.environment] = environment }
    let batch = CollectorBatch(
      sentAt: Batches.now, context: context, events: ids.map { Batches.event($0, device: device, at: time) },
      counters: [])
    return try await client.execute(
      uri: "/v1/batch", method: .post, headers: [.authorization: "Bearer \(key)"],
      body: ByteBuffer(bytes: BatchWriter.batch(batch))
    ) { ($0.status, String(buffer: $0.body)) }
  }

  /// A collector on SQLite holding development's events and production's, sent through the
  /// unbound key.
  static func seeded(development: [String], production: [String], devices: (String, String), at time: Int64? = nil)
    async throws -> EventCollector
  {
    let collector = try await collector(.sqlite)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let first = try await send(
        client, key: writeKey, environment: "development", ids: development, device: devices.0, at: time)
      let second = try await send(client, key: writeKey, environment: nil, ids: production, device: devices.1, at: time)
      #expect(first.0 == .ok && second.0 == .ok, "\(first.1) \(second.1)")
    }
    return collector
  }

  static func overview(_ client: some TestClientProtocol, environment: String?) async throws -> Overview.Figures {
    let query = environment.map { "&environment=\($0)" } ?? ""
    let (status, body, _) = try await ReportRouteTests.get(
      client, "/v1/reports/overview?app=ty&from=2020-01-01\(query)", key: readKey)
    #expect(status == .ok, "\(body)")
    return try JSONDecoder().decode(Overview.self, from: Data(body.utf8)).current
  }

  @Test(
    "development and production never meet: the batch names its environment, a bound key decides it",
    arguments: LiveTests.Engine.available)
  func keptApart(engine: LiveTests.Engine) async throws {
    let collector = try await Self.collector(engine)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      // An unbound key takes the batch's environment; a batch naming none is production's.
      #expect(
        try await Self.send(client, key: writeKey, environment: "development", ids: ["d1", "d2"], device: "dev-1").0
          == .ok)
      #expect(
        try await Self.send(client, key: writeKey, environment: nil, ids: ["p1", "p2", "p3"], device: "user-1").0 == .ok
      )
      // A key bound to an environment decides it, whatever the batch says.
      #expect(
        try await Self.send(client, key: Self.productionKey, environment: "development", ids: ["p4"], device: "user-2")
          .0 == .ok)
      #expect(
        try await Self.send(client, key: Self.developmentKey, environment: "production", ids: ["d3"], device: "dev-2").0
          == .ok)

      let production = try await Self.overview(client, environment: nil)
      #expect(production.events == 4 && production.devices == 2, "\(production)")
      #expect(try await Self.overview(client, environment: "production") == production)
      let development = try await Self.overview(client, environment: "development")
      #expect(development.events == 3 && development.devices == 2, "\(development)")
      let (_, top, _) = try await ReportRouteTests.get(
        client, "/v1/reports/events?app=ty&from=2020-01-01&environment=development", key: readKey)
      #expect(top.contains("d1") && top.contains("d3") && !top.contains("p1") && !top.contains("p4"), "\(top)")
      #expect(top.contains(#""environment":"development""#), "\(top)")

      let (_, apps, _) = try await ReportRouteTests.get(client, "/v1/apps", key: readKey)
      #expect(apps.contains(#""apps":["ty"]"#) && apps.contains(#""ty":["production","development"]"#), "\(apps)")

      let (status, problem, _) = try await ReportRouteTests.get(
        client, "/v1/reports/overview?app=ty&environment=Dev%20Build", key: readKey)
      #expect(status == .badRequest && problem.contains("environment"), "\(problem)")
    }
    try await collector.store.close()
  }

  @Test("a batch naming an invalid environment is refused with its field and kept in the quarantine")
  func invalidEnvironment() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, body) = try await Self.send(
        client, key: writeKey, environment: "Dev Build", ids: ["x1"], device: "d")
      #expect(status == .badRequest && body.contains("context.environment"), "\(body)")
      let held = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
      #expect(held.count == 1 && held[0].reasons.joined().contains("context.environment"), "\(held)")
    }
    #expect(try await collector.store.events(app: "ty", limit: 10).isEmpty)
    try await collector.store.close()
  }

  @Test("the dashboard picks the environment, and every page of one but production wears a banner")
  func dashboard() async throws {
    let collector = try await Self.seeded(
      development: ["d1"], production: ["p1"], devices: ("dev-1", "user-1"))
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (_, production, _) = try await ReportRouteTests.get(client, "/?app=ty&from=2020-01-01", key: readKey)
      #expect(production.contains(#"name="environment""#) && production.contains(#"<option value="development""#))
      #expect(!production.contains(#"class="banner""#))
      let (_, development, _) = try await ReportRouteTests.get(
        client, "/dashboard/events?app=ty&from=2020-01-01&environment=development", key: readKey)
      #expect(development.contains(#"class="banner""#) && development.contains("d1") && !development.contains("p1"))
      #expect(development.contains("environment=development"), "links keep the environment")
    }
    try await collector.store.close()
  }

  @Test("erasing a device erases it in every environment of the app")
  func erasure() async throws {
    let collector = try await Self.seeded(
      development: ["d1"], production: ["p1", "p2"], devices: ("same", "same"))
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, body) = try await QuarantineTests.call(client, "/v1/events?app=ty&deviceId=same", method: .delete)
      #expect(status == .ok && body.contains(#""events":3"#), "\(body)")
    }
    #expect(try await collector.store.events(app: "ty", limit: 10).isEmpty)
    #expect(try await collector.store.events(app: "ty@development", limit: 10).isEmpty)
    try await collector.store.close()
  }

  @Test("each environment keeps its data as long as its own retention says")
  func retention() async throws {
    let configuration = try CollectorConfiguration.resolve(
      arguments: ["retention": "ty@development=7,ty@production=90"], environment: [:])
    #expect(configuration.retention.perApp == ["ty@development": 7, "ty": 90])
    #expect(throws: CollectorConfiguration.Problem.self) {
      try CollectorConfiguration.resolve(arguments: ["retention": "ty@Dev=7"], environment: [:])
    }
    let tenDaysAgo = Batches.now - 10 * 86_400_000
    let collector = try await Self.seeded(
      development: ["d1"], production: ["p1"], devices: ("a", "a"), at: tenDaysAgo)
    let job = RetentionJob(store: collector.store, policy: configuration.retention, logger: .init(label: "test"))
    #expect(try await job.runOnce() == 1)
    #expect(try await collector.store.events(app: "ty@development", limit: 10).isEmpty)
    #expect(try await collector.store.events(app: "ty", limit: 10).map(\.eventID) == ["p1"])
    try await collector.store.close()
  }
}
