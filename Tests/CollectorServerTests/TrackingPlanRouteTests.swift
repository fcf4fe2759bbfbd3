import CollectorIngest
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing
import TrackingPlan

/// The collector holds events to their app's tracking plan, on every engine: a wrong type is
/// quarantined with the plan's version and reason, stored once by a replay after the plan is fixed;
/// a plan that warns stores and counts.
@Suite("Tracking plans over HTTP")
struct TrackingPlanRouteTests {
  /// Version 1 has `price` as an integer: the app sends 129.9.
  static let version1 = """
    # Trendyol's plan: what the product detail sends.
    app: ty
    version: 1
    mode: enforce
    events:
      product_viewed:
        kind: screen
        owner: product-detail
        parameters:
          - {name: product_id, type: string, required: true}
          - {name: price, type: integer, minimum: 0}
          - {name: in_stock, type: boolean}
      product_shared:
        parameters:
          - {name: product_id, type: string, required: true}
    """

  static func file(_ text: String) throws -> String {
    let url = TestFiles.unique("plan", suffix: ".yaml")
    try text.write(to: url, atomically: true, encoding: .utf8)
    return url.path
  }

  static func send(_ client: some TestClientProtocol, _ events: [CollectorEvent]) async throws -> String {
    try await client.execute(
      uri: "/v1/batch", method: .post, headers: [.authorization: "Bearer \(writeKey)"],
      body: ByteBuffer(bytes: Batches.body(events))
    ) { String(buffer: $0.body) }
  }

  @Test(
    "a wrong type is quarantined with its reason, replayed once the plan is fixed, and counted once",
    arguments: LiveTests.Engine.available)
  func quarantineAndReplay(engine: LiveTests.Engine) async throws {
    let path = TestFiles.unique("plan")
      .appendingPathComponent("collector.sqlite").path
    let strict = try PlanFiles.load([try Self.file(Self.version1)])
    let before = try await makeCollector(
      store: { engine.store($0, "plans") }, path: path, configure: { $0.plans = strict })
    let fine = {
      var event = Batches.event("fine")
      event.parameters["price"] = .int(130)
      return event
    }()
    try await before.application(closesStore: false).test(.router) { client async throws in
      let answer = try await Self.send(client, [Batches.event("wrong"), fine])
      #expect(answer.contains(#""accepted":1"#), "\(answer)")
      #expect(answer.contains("events[0].parameters.price") && answer.contains("tracking plan ty v1"), "\(answer)")
    }
    let held = try await before.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(
      held.count == 1
        && held[0].reasons == ["events[0].parameters.price: must be an integer, not a number (tracking plan ty v1)"])
    #expect(try await before.store.eventCount(app: "ty") == 1)

    // Version 2 makes `price` a number; version 1 is still held for the apps built with it.
    let fixed = try PlanFiles.load([
      try Self.file(Self.version1),
      try Self.file(
        Self.version1.replacingOccurrences(of: "version: 1", with: "version: 2")
          .replacingOccurrences(of: "type: integer", with: "type: number")),
    ])
    let after = try await makeCollector(store: { _ in before.store }, path: path, configure: { $0.plans = fixed })
    try await after.application(closesStore: false).test(.router) { client async throws in
      let (_, replay) = try await QuarantineTests.call(client, "/v1/quarantine/replay", method: .post)
      #expect(replay.contains(#""stored":1"#) && replay.contains(#""kept":0"#), "\(replay)")
      let (_, again) = try await QuarantineTests.call(client, "/v1/quarantine/replay", method: .post)
      #expect(again.contains(#""stored":0"#), "\(again)")
    }
    let events = try await after.store.events(app: "ty", limit: 10)
    #expect(events.map(\.eventID).sorted() == ["fine", "wrong"], "each stored once")
    try await after.store.close()
  }

  @Test("a plan that warns stores what breaks it, and the collector counts it")
  func warns() async throws {
    let plans = try PlanFiles.load([try Self.file(Self.version1.replacingOccurrences(of: "enforce", with: "warn"))])
    let collector = try await makeCollector(configure: { $0.plans = plans })
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let answer = try await Self.send(client, [Batches.event("wrong")])
      #expect(answer.contains(#""accepted":1"#) && answer.contains(#""rejected":[]"#), "\(answer)")
      let metrics = try await client.execute(
        uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(readKey)"]
      ) { String(buffer: $0.body) }
      #expect(metrics.contains(#"collector_plan_violations_total{mode="warn"} 1"#), "\(metrics.prefix(2000))")
    }
    #expect(try await collector.store.eventCount(app: "ty") == 1)
    try await collector.store.close()
  }

  @Test(
    "a plan file that is not one is refused at start, naming the file and the field",
    arguments: [
      ("app: ty\nevents: {}\n", "version is required"),
      (
        "app: ty\nversion: 1\nevents:\n  a:\n    parameters:\n      - {name: p, type: text}\n",
        "events.a.parameters[0].type"
      ),
      ("app: ty@development\nversion: 1\n", "for every environment"),
      ("app: ty\nversion: 0\n", "version: must be 1 or more"),
      (
        "app: ty\nversion: 1\nevents:\n  a:\n    parameters:\n      - {name: p, type: string}\n      - {name: p, type: integer}\n",
        "events.a.parameters[1].name: p is listed twice"
      ),
    ])
  func refusedFiles(text: String, expected: String) throws {
    let path = try Self.file(text)
    do {
      _ = try CollectorConfiguration.resolve(arguments: ["tracking-plans": path], environment: [:])
      Issue.record("accepted \(text)")
    } catch {
      #expect(error.description.contains(path) && error.description.contains(expected), "\(error)")
    }
  }

  @Test("the dashboard's Plan page: events seen but not planned, planned but never seen, violations held")
  func dashboardPage() async throws {
    let path = TestFiles.unique("plan")
      .appendingPathComponent("collector.sqlite").path
    // Before the plan: an event it will not list is stored.
    let before = try await makeCollector(path: path)
    let unplanned = {
      var opened = Batches.event("opened")
      opened.name = "app_opened"
      opened.parameters = [:]
      return opened
    }()
    try await before.application(closesStore: false).test(.router) { client async throws in
      _ = try await Self.send(client, [unplanned])
    }
    try await before.store.close()
    let plans = try PlanFiles.load([try Self.file(Self.version1)])
    let collector = try await makeCollector(path: path, configure: { $0.plans = plans })
    try await collector.application(closesStore: false).test(.router) { client async throws in
      _ = try await Self.send(client, [Batches.event("wrong")])
      let (status, page, _) = try await ReportRouteTests.get(
        client, "/dashboard/plan?app=ty&from=2020-01-01", key: readKey)
      #expect(status == .ok && page.contains("ty v1 (enforce)"), "\(page.prefix(500))")
      #expect(page.contains("<td>app_opened</td><td>not in the plan</td><td>1</td>"))
      #expect(page.contains("<td>product_shared</td><td>never seen</td><td>0</td>"))
      #expect(
        page.contains("<td>parameters.price: must be an integer, not a number (tracking plan ty v1)</td><td>1</td>"))
      let (_, none, _) = try await ReportRouteTests.get(client, "/dashboard/plan?app=dl&from=2020-01-01", key: readKey)
      #expect(none.contains("has no tracking plan"))
    }
    try await collector.store.close()
  }

  @Test("GA4, Mixpanel and SimpleAnalytics events are held to the plan too: what breaks it is quarantined")
  func vendorRoutes() async throws {
    let plans = try PlanFiles.load([try Self.file(Self.version1)])
    let collector = try await makeCollector(configure: { $0.plans = plans })
    let now = Int64(Date().timeIntervalSince1970)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let ga4 = #"""
        {"app_instance_id":"0123456789abcdef0123456789abcdef","events":[
        {"name":"product_shared","params":{"product_id":"p-1"}},{"name":"level_up","params":{}}]}
        """#
      let collect = try await client.execute(
        uri: "/mp/collect?firebase_app_id=1:1:ios:x&api_secret=\(writeKey)", method: .post,
        body: ByteBuffer(string: ga4)
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(collect.0 == .ok && collect.1.contains("level_up is not in the tracking plan (ty v1)"), "\(collect)")
      let mixpanel =
        #"[{"event":"Signed Up","properties":{"token":"\#(writeKey)","distinct_id":"u-1","time":\#(now),"$insert_id":"s1"}}]"#
      let tracked = try await client.execute(
        uri: "/track?verbose=1", method: .post, headers: [.contentType: "application/json"],
        body: ByteBuffer(string: mixpanel)
      ) { String(buffer: $0.body) }
      #expect(tracked.contains(#""status":1"#), "\(tracked)")
      let simple = SimpleAnalyticsExactnessTests.payload([("Refresh", SimpleAnalyticsExactnessTests.second)])
      let (status, answer) = try await SimpleAnalyticsExactnessTests.post(client, simple)
      #expect(status == 200 && answer.contains("Refresh is not in the tracking plan (ty v1)"), "\(answer)")
    }
    let held = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    let reasons = held.flatMap(\.reasons).joined(separator: "\n")
    #expect(reasons.contains("events[1].name: level_up is not in the tracking plan (ty v1)"), "\(reasons)")
    #expect(reasons.contains("Signed Up is not in the tracking plan (ty v1)"), "\(reasons)")
    #expect(reasons.contains("items[0].description: Refresh is not in the tracking plan (ty v1)"), "\(reasons)")
    #expect(try await collector.store.events(app: "ty", limit: 10).map(\.name).contains("product_shared"))
    try await collector.store.close()
  }
}
