import CollectorWire
import CoreTracker
import Delivery
import Foundation
import SimpleAnalyticsService
import TestSupport
import Testing

func payloads(_ server: TestHTTPServer) throws -> [SimpleAnalyticsPayload] {
  try server.requests.map { try JSONDecoder().decode(SimpleAnalyticsPayload.self, from: Data($0.body)) }
}

let iPhone = TrackingContext(
  appName: "Moments", appVersion: "2.1", appBuild: "214", osName: "iOS", osVersion: "17.4.1", platform: "iOS",
  deviceModel: "iPhone15,2", locale: "en_US", timeZone: "America/Los_Angeles"
)

@Suite("SimpleAnalyticsService", .serialized)
struct SimpleAnalyticsServiceTests {
  private func service(
    _ url: URL, _ directory: borrowing TemporaryDirectory, threshold: Int = 100, increment: Int = 20,
    flushTimeout: TimeInterval = 60
  ) throws -> SimpleAnalyticsService {
    // `flush` returns when everything is delivered: the timeout only bounds a flush against a
    // server that is down (then it is short), and is generous otherwise (slow machines, TSan).
    try SimpleAnalyticsService(
      endpoint: url.appendingPathComponent("v1/simple-analytics"), deviceID: "device-1", directory: directory.url,
      threshold: threshold, failureIncrement: increment,
      retry: RetryPolicy(initialDelay: 0.01, maximumDelay: 0.02, maximumEventAge: 10 * 365 * 86_400),
      flushTimeout: flushTimeout
    )
  }

  @Test func thePayloadIsWhatTheSimpleAnalyticsClientSends() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let analytics = try service(server.url, directory)
    let moment = Date(timeIntervalSince1970: 1_679_505_330)
    let tracker = Tracker(
      services: [analytics],
      configuration: TrackerConfiguration(context: iPhone, emitsSessionEvents: false, clock: { moment })
    )
    tracker.track(GenericEvent("Liked moment", parameters: ["moment": "m1", "count": 2]))
    tracker.track(GenericEvent("Opened app"))
    tracker.count("Foregrounded app")
    tracker.count("Foregrounded app")
    await tracker.flush()

    let request = try #require(server.requests.first)
    #expect(request.uri == "/v1/simple-analytics")
    #expect(request.headers["content-encoding"] == nil)
    let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
    #expect(
      Set(json.keys) == ["device_id", "app_name", "app_version", "system_version", "platform", "items", "counters"])
    let payload = try #require(try payloads(server).first)
    #expect(payload.deviceID == "device-1" && payload.appName == "Moments" && payload.appVersion == "214")
    #expect(payload.systemVersion == "17.4.1" && payload.platform == "iOS (iPhone)")
    #expect(payload.items.map(\.description) == ["Liked moment", "Opened app"])
    #expect(payload.items[0].timestamp == "2023-03-22T10:15:30.000-07:00")
    #expect(payload.items[0].parameters == ["moment": "m1", "count": "2"])
    #expect(payload.items[1].parameters == nil)
    let items = try #require(json["items"] as? [[String: Any]])
    #expect(items[1]["parameters"] == nil, "the key is left out when there are no parameters")
    #expect(payload.counters.map { "\($0.name)=\($0.count)" } == ["Foregrounded app=2"])
  }

  static let flattenings: [(EventParameters, [String: String])] = [
    (["a": 1, "b": "x"], ["a": "1", "b": "x"]),
    (
      ["items": [["item_id": "SKU-1", "price": 9.99], ["item_id": "SKU-2"]], "tags": ["a", "b"]],
      ["items.0.item_id": "SKU-1", "items.0.price": "9.99", "items.1.item_id": "SKU-2", "tags.0": "a", "tags.1": "b"]
    ),
    (["empty": [], "none": [:], "deep": [["x": [true]]]], ["empty": "[]", "none": "{}", "deep.0.x.0": "true"]),
  ]

  @Test(arguments: flattenings)
  func structuredParametersAreFlattenedToDottedKeys(parameters: EventParameters, flat: [String: String]) {
    #expect(SimpleAnalyticsFlattening.flattened(parameters) == flat)
  }

  @Test func itSubmitsAtOneHundredEntriesAndNewCountersCountButRepeatsDoNot() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let analytics = try service(server.url, directory)
    let tracker = Tracker(
      services: [analytics], configuration: TrackerConfiguration(context: iPhone, emitsSessionEvents: false)
    )
    for index in 0..<98 { tracker.track(GenericEvent("item \(index)")) }
    tracker.count("Foregrounded app")
    for _ in 0..<10 { tracker.count("Foregrounded app") }  // an existing counter: does not count
    await tracker.handedOver()
    await analytics.queue.idle()
    #expect(server.requests.isEmpty)
    tracker.count("Opened settings")  // a new counter: the 100th entry
    #expect(await waitUntil { !server.requests.isEmpty })
    let payload = try #require(try payloads(server).first)
    #expect(payload.items.count == 98)
    #expect(payload.counters.map { "\($0.name)=\($0.count)" } == ["Foregrounded app=11", "Opened settings=1"])
  }

  @Test func aFailureRaisesTheThresholdByTwentyAndASuccessResetsIt() async throws {
    let failing = LockedFlag(true)
    let server = try await TestHTTPServer.start { _ in failing.value ? TestResponse(status: 503) : TestResponse() }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let analytics = try service(server.url, directory, threshold: 10, increment: 20)
    let tracker = Tracker(
      services: [analytics], configuration: TrackerConfiguration(context: iPhone, emitsSessionEvents: false)
    )
    for index in 0..<10 { tracker.track(GenericEvent("a\(index)")) }
    #expect(await waitUntil { server.requests.count == 1 })
    // The threshold is now 30 entries waiting: 19 more do not submit, the 20th does.
    #expect(await waitUntil { analytics.statistics()?.lastError == "HTTP 503" })
    failing.value = false
    for index in 0..<19 { tracker.track(GenericEvent("b\(index)")) }
    await tracker.handedOver()
    await analytics.queue.idle()
    #expect(server.requests.count == 1)
    tracker.track(GenericEvent("b19"))
    #expect(await waitUntil { (try? payloads(server).last?.items.count) == 30 })
    // Back to 10 after the success. The sending task must be done with that drain first: a drain
    // sends whatever the outbox holds when it reads it, so items tracked while it still runs go early.
    #expect(await waitUntil { analytics.statistics()?.queued == 0 })
    await analytics.queue.idle()
    let sent = server.requests.count
    for index in 0..<9 { tracker.track(GenericEvent("c\(index)")) }
    await tracker.handedOver()
    await analytics.queue.idle()
    #expect(server.requests.count == sent)
    tracker.track(GenericEvent("c9"))
    #expect(await waitUntil { server.requests.count == sent + 1 })
    #expect(try payloads(server).last?.items.map(\.description) == (0..<10).map { "c\($0)" })
  }

  @Test(arguments: [400, 404, 500])
  func anyNonTwoHundredIsRetried(status: Int) async throws {
    let calls = LockedCounter()
    let server = try await TestHTTPServer.start { _ in
      calls.next() == 1 ? TestResponse(status: status) : TestResponse(body: "ok")
    }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let analytics = try service(server.url, directory)
    let tracker = Tracker(services: [analytics], configuration: TrackerConfiguration(emitsSessionEvents: false))
    tracker.track(GenericEvent("x"))
    await tracker.flush()
    #expect(server.requests.count == 2)
    #expect(analytics.statistics()?.delivered == 1)
  }

  @Test func unsentItemsSurviveARestartUnlikeSimpleAnalytics() async throws {
    let probe = try await TestHTTPServer.start()
    let port = probe.port
    await probe.stop()
    let directory = TemporaryDirectory()
    let url = URL(string: "http://127.0.0.1:\(port)")!
    do {
      let analytics = try service(url, directory, flushTimeout: 1)
      let tracker = Tracker(services: [analytics], configuration: TrackerConfiguration(emitsSessionEvents: false))
      for index in 0..<5 { tracker.track(GenericEvent("kept \(index)")) }
      tracker.count("Foregrounded app", by: 3)
      analytics.sendSoon()
      await tracker.flush()
      #expect(analytics.statistics()?.queued == 6)
    }
    #expect(await waitUntil(30) { outboxRunsAreUnlocked(in: directory.url) })
    let server = try await TestHTTPServer.start(port: port)
    defer { Task { await server.stop() } }
    let restarted = try service(url, directory)
    await restarted.flush()
    let payload = try #require(try payloads(server).first)
    #expect(payload.items.map(\.description) == (0..<5).map { "kept \($0)" })
    #expect(payload.counters.map(\.count) == [3])
  }
}
