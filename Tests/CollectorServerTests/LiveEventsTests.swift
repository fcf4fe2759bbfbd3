import CollectorRuntime
import CollectorStore
import CollectorWire
import Delivery
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import CollectorServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The feed behind the live page: bounded, never waiting, building nothing when no one watches.
@Suite("Live feed")
struct LiveFeedTests {
  @Test func publishingWithNoWatcherBuildsNothing() {
    let feed = LiveFeed<Int>()
    var built = false
    feed.publish {
      built = true
      return [1]
    }
    #expect(!built)
  }

  @Test(arguments: [1, 3, 10])
  func aWatcherThatFallsBehindKeepsTheNewestAndCountsTheRest(buffer: Int) async {
    let feed = LiveFeed<Int>(bufferSize: buffer)
    let watch = try! #require(feed.watch { $0 % 2 == 0 })
    feed.publish { Array(1...20) }  // 10 admitted
    feed.stop(watch.id)
    var received: [Int] = []
    for await item in watch.items { received.append(item) }
    let admitted = Array(stride(from: 2, through: 20, by: 2))
    #expect(received == Array(admitted.suffix(buffer)))
    #expect(feed.skipped(watch.id) == 0, "a stopped watcher is forgotten")
  }

  @Test func skippedItemsAreCountedWhileWatching() {
    let feed = LiveFeed<Int>(bufferSize: 2)
    let watch = try! #require(feed.watch { _ in true })
    feed.publish { [1, 2, 3, 4, 5] }
    #expect(feed.skipped(watch.id) == 3)
  }

  @Test func watchersAreBoundedAndStoppingFreesAPlace() {
    let feed = LiveFeed<Int>(maximumWatchers: 2)
    // A watch whose stream is gone (dropped) is forgotten too, so these are kept.
    let first = feed.watch { _ in true }
    let second = feed.watch { _ in true }
    #expect(first != nil && second != nil && feed.watch { _ in true } == nil)
    feed.stop(try! #require(first).id)
    #expect(feed.watcherCount == 1)
    let third = feed.watch { _ in true }
    #expect(third != nil && feed.watcherCount == 2)
    #expect(second?.id != third?.id)
  }

  static let items = [
    LiveItem(kind: "event", time: "", app: "ty", environment: "production", name: "purchase", device: "d1"),
    LiveItem(kind: "event", time: "", app: "ty", environment: "development", name: "purchase", device: "d1"),
    LiveItem(kind: "event", time: "", app: "dl", environment: "production", name: "purchase", device: "d1"),
    LiveItem(kind: "event", time: "", app: "ty", environment: "production", name: "search", device: "d2"),
    LiveItem(
      kind: "quarantined", time: "", app: "ty", environment: "", name: "batch",
      detail: #"{"name":"purchase","anonymousId":"d1"}"#, reasons: ["too old"]),
    LiveItem(kind: "drop", time: "", app: "ty", environment: "production", name: "outbox_full", device: "d2"),
  ]

  /// Which of ``items`` each filter admits (by index).
  @Test(arguments: [
    ("app=ty", [0, 3, 4, 5]), ("app=ty&environment=development", [1, 4]), ("app=dl", [2]),
    ("app=ty&event=purchase", [0, 4, 5]), ("app=ty&device=d2", [3, 5]), ("app=ty&event=purchase&device=d2", [5]),
  ])
  func theFilterAdmitsItsAppEnvironmentEventAndDevice(query: String, admitted: [Int]) throws {
    let filter = try LiveFilter(FormQuery(query))
    #expect(Self.items.indices.filter { filter.admits(Self.items[$0]) } == admitted)
  }

  @Test(arguments: ["", "environment=production", "app=ty&environment=Bad Name"])
  func aFilterWithoutAnAppOrWithABadEnvironmentIsRefused(query: String) {
    #expect(throws: FieldError.self) { try LiveFilter(FormQuery(query)) }
  }
}

/// `GET /dashboard/live-events` over real HTTP: what is stored and quarantined after it opened.
@Suite("Live stream")
struct LiveStreamTests {
  @Test func theStreamCarriesAStoredEventAndAQuarantinedOneWithItsReason() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let port = try #require(client.port)
      // Read with a client of generous patience (the test client gives up after 20 s, which a
      // machine busy with the whole suite can take before the stream's two items arrive).
      var request = URLRequest(
        url: URL(string: "http://127.0.0.1:\(port)/dashboard/live-events?app=ty&limit=2")!, timeoutInterval: 120)
      request.setValue("Bearer \(adminKey)", forHTTPHeaderField: "Authorization")
      let stream = Task { [request] in
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (
          HTTPResponse.Status(code: http.statusCode), http.value(forHTTPHeaderField: "Content-Type") ?? "",
          String(decoding: data, as: UTF8.self)
        )
      }
      let opened = ContinuousClock.now
      while collector.live.watcherCount == 0, ContinuousClock.now - opened < .seconds(20) {
        try await Task.sleep(for: .milliseconds(20))
      }
      let old = Batches.now - 400 * 86_400_000
      let answer = try await URLSessionTransport(timeout: 20).send(
        Delivery.HTTPRequest(
          url: URL(string: "http://127.0.0.1:\(port)/v1/batch")!,
          headers: ["Authorization": "Bearer \(writeKey)", "Content-Type": "application/json"],
          body: Batches.body([Batches.event("live-1", device: "phone-7"), Batches.event("live-2", at: old)])))
      #expect(answer.status == 200)
      let (status, type, body) = try await stream.value
      #expect(status == .ok && type.hasPrefix("text/event-stream"))
      let items = body.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map {
        try? JSONSerialization.jsonObject(with: Data($0.dropFirst(6).utf8)) as? [String: Any]
      }
      #expect(items.count == 2, "\(body)")
      let stored = try #require(items.first { $0?["kind"] as? String == "event" } ?? nil, "\(body)")
      #expect(stored["name"] as? String == "product_viewed" && stored["device"] as? String == "phone-7")
      #expect(stored["environment"] as? String == "production" && stored["platform"] as? String == "ios")
      let held = try #require(items.first { $0?["kind"] as? String == "quarantined" } ?? nil, "\(body)")
      let reasons = try #require(held["reasons"] as? [String])
      #expect(reasons.count == 1 && reasons[0].contains("timestamp"), "\(reasons)")
      #expect(collector.live.watcherCount == 0, "the stream's end frees its place")
    }
  }

  @Test func theStreamNeedsASignedInViewerAndAnApp() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let anonymous = try await client.execute(uri: "/dashboard/live-events?app=ty", method: .get) { $0.status }
      #expect(anonymous == .unauthorized)
      let writer = try await client.execute(
        uri: "/dashboard/live-events?app=ty", method: .get, headers: [.authorization: "Bearer \(writeKey)"]
      ) { $0.status }
      #expect(writer == .unauthorized, "a write key cannot read")
      let noApp = try await client.execute(
        uri: "/dashboard/live-events", method: .get, headers: [.authorization: "Bearer \(adminKey)"]
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(noApp.0 == .badRequest && noApp.1.contains("app"), "\(noApp.1)")
    }
  }
}
