import CollectorClickHouse
import CollectorIngest
import CollectorPostgres
import CollectorRuntime
import CollectorServer
import CollectorService
import CollectorStore
import CollectorWire
import CoreTracker
import Delivery
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SimpleAnalyticsService
import TestSupport
import Testing

/// The client and the server together: CollectorService sends through a real tracker over real
/// HTTP on 127.0.0.1 to a running collector; the store counts exactly what was tracked.
@Suite("Collector live end to end")
struct LiveTests {
  enum Engine: String, CaseIterable, CustomStringConvertible {
    case sqlite, postgres, clickhouse
    var description: String { rawValue }
    static var available: [Engine] {
      [.sqlite] + (PostgresTestServer.url == nil ? [] : [.postgres])
        + (ClickHouseTestServer.url == nil ? [] : [.clickhouse])
    }

    /// This engine's store for a test: `sqlite` itself, or a fresh PostgreSQL schema or ClickHouse
    /// database named after `test`.
    func store(_ sqlite: any EventStore, _ test: String) -> any EventStore {
      switch self {
      case .sqlite: sqlite
      case .postgres:
        try! PostgresEventStore(url: PostgresTestServer.url!, schema: PostgresTestServer.uniqueSchema(test))
      case .clickhouse:
        try! ClickHouseEventStore(url: ClickHouseTestServer.url!, database: ClickHouseTestServer.uniqueDatabase())
      }
    }
  }

  @Test("CollectorService → collector: every event and counter stored exactly once", arguments: Engine.available)
  func endToEnd(engine: Engine) async throws {
    let collector = try await makeCollector { engine.store($0, "live") }
    let directory = TemporaryDirectory()
    let outbox = directory.url
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let port = try #require(client.port)
      let service = try CollectorService(
        endpoint: URL(string: "http://127.0.0.1:\(port)")!, writeKey: writeKey, directory: outbox,
        batchSize: 250, retry: RetryPolicy(initialDelay: 0.05, maximumDelay: 0.2),
        policy: FlushPolicy(count: 250, interval: nil, flushTimeout: 30)
      )
      let tracker = Tracker(services: [service], configuration: TrackerConfiguration(emitsSessionEvents: false))
      for index in 0..<2_000 {
        tracker.track(GenericEvent("screen_\(index % 7)", parameters: ["index": .int(index)]))
        if index % 10 == 0 { tracker.count("Foregrounded", by: 2) }
      }
      await tracker.flush()
      #expect(try await collector.store.eventCount(app: "ty") == 2_000)
      let counters = try await collector.store.counters(app: "ty")
      #expect(counters.map(\.count).reduce(0, +) == 400)
      let events = try await collector.store.events(app: "ty", limit: 5_000)
      #expect(Set(events.map(\.eventID)).count == 2_000)
      #expect(events.allSatisfy { $0.context[.libraryName] == "CoreTracker" && !$0.deviceID.isEmpty })
      // The service counts records: 2,000 events and 200 counter increments.
      #expect(service.statistics()?.delivered == 2_200)
    }
    try await collector.store.close()
  }

  /// The ingest spool in front of each engine: the 2xx is the spool's `fsync`, the store takes the
  /// rows behind it; an erasure through the API waits for them, so none of the device's survive it.
  @Test("CollectorService → collector → spool → store: every event once, erasure waits", arguments: Engine.available)
  func throughTheSpool(engine: Engine) async throws {
    let directory = TemporaryDirectory()
    let collector = try await makeCollector(
      store: { engine.store($0, "spool") }, spoolDirectory: directory.url.appendingPathComponent("spool").path)
    let spool = try #require(collector.spool)
    let outbox = directory.url.appendingPathComponent("outbox")
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let port = try #require(client.port)
      let service = try CollectorService(
        endpoint: URL(string: "http://127.0.0.1:\(port)")!, writeKey: writeKey,
        directory: outbox, batchSize: 100,
        retry: RetryPolicy(initialDelay: 0.05, maximumDelay: 0.2),
        policy: FlushPolicy(count: 100, interval: nil, flushTimeout: 30))
      let tracker = Tracker(services: [service], configuration: TrackerConfiguration(emitsSessionEvents: false))
      for index in 0..<1_000 { tracker.track(GenericEvent("screen_\(index % 7)", parameters: ["index": .int(index)])) }
      tracker.count("Foregrounded", by: 3)
      await tracker.flush()
      #expect(service.statistics()?.delivered == 1_001)
      try await spool.flush()
      #expect(await spool.depth == 0)
      #expect(try await collector.store.eventCount(app: "ty") == 1_000)
      #expect(try await collector.store.counters(app: "ty").map(\.count) == [3])
      let device = try #require(try await collector.store.events(app: "ty", limit: 1).first?.deviceID)

      // Spooled but not yet drained when the erasure arrives: it waits for them.
      for index in 0..<50 { tracker.track(GenericEvent("late", parameters: ["index": .int(index)])) }
      await tracker.flush()
      let erased = try await client.execute(
        uri: "/v1/events?app=ty&deviceId=\(device)", method: .delete, headers: [.authorization: "Bearer \(adminKey)"])
      #expect(erased.status == .ok)
      try await spool.flush()
      #expect(try await collector.store.eventCount(app: "ty") == 0, "nothing of the erased device after the erasure")
    }
    try await collector.shutdown()
  }

  /// The default bounds (tracker queue, outbox, batch size, flush policy) take a 50,000-event burst
  /// tracked in one loop, as fast as `track` returns, while the collector answers: nothing dropped,
  /// every event stored once, and the counts balance exactly.
  @Test("A 50,000-event burst with default settings: every event delivered, stats balance exactly")
  func defaultBoundsTakeABurst() async throws {
    let collector = try await makeCollector()
    let directory = TemporaryDirectory()
    let outbox = directory.url
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let port = try #require(client.port)
      let service = try CollectorService(
        endpoint: URL(string: "http://127.0.0.1:\(port)")!, writeKey: writeKey, directory: outbox
      )
      let tracker = Tracker(services: [service])
      let burst = 50_000
      for index in 0..<burst {
        tracker.track(
          GenericEvent(
            "product_viewed",
            parameters: [
              "product_id": .string("p-\(index % 977)"), "price": .double(Double(index % 500) + 0.99),
              "position": .int(index % 40), "in_stock": .bool(index % 3 != 0), "list": .string("search"),
            ]))
      }
      await tracker.flush()
      // `flush` waits up to the policy's 10 s; a debug build under ThreadSanitizer may need a few.
      for _ in 0..<12 where tracker.stats.services[.collector].map({ $0.queued + $0.inFlight }) != 0 {
        await tracker.flush()
      }
      let stats = tracker.stats
      let delivery = try #require(stats.services[.collector])
      #expect(stats.tracked == burst)
      #expect(stats.totalDropped == 0, "dropped by the tracker: \(stats.dropped)")
      #expect(delivery.dropped.isEmpty, "dropped by delivery: \(delivery.dropped)")
      #expect(delivery.received == burst + stats.generated)
      #expect(delivery.delivered == delivery.received)
      #expect(delivery.received == delivery.delivered + delivery.dropped.values.reduce(0, +) + delivery.queued)
      #expect(try await collector.store.eventCount(app: "ty") == delivery.received)
    }
    try await collector.store.close()
  }

  @Test("SimpleAnalyticsService → /v1/simple-analytics?key=: items and counters stored exactly once")
  func simpleAnalyticsEndToEnd() async throws {
    let collector = try await makeCollector()
    let directory = TemporaryDirectory()
    let outbox = directory.url
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let port = try #require(client.port)
      var endpoint = URLComponents(string: "http://127.0.0.1:\(port)/v1/simple-analytics")!
      endpoint.queryItems = [URLQueryItem(name: "key", value: writeKey)]
      let service = try SimpleAnalyticsService(
        endpoint: endpoint.url!, deviceID: "sa-device", directory: outbox,
        retry: RetryPolicy(initialDelay: 0.05, maximumDelay: 0.2)
      )
      let tracker = Tracker(services: [service], configuration: TrackerConfiguration(emitsSessionEvents: false))
      for index in 0..<250 {
        tracker.track(GenericEvent("Opened screen \(index % 5)", parameters: ["index": .int(index)]))
        if index % 50 == 0 {
          // SimpleAnalytics keys a counter total by its first-count time (ms): counts a few ms apart,
          // as an app makes them, keep totals of different batches apart.
          tracker.count("Foregrounded")
          try await Task.sleep(for: .milliseconds(5))
        }
      }
      await tracker.flush()
      #expect(try await collector.store.eventCount(app: "ty") == 250)
      let events = try await collector.store.events(app: "ty", limit: 1_000)
      #expect(events.allSatisfy { $0.deviceID == "sa-device" && $0.context[.libraryName] == "SimpleAnalytics" })
      #expect(try await collector.store.counters(app: "ty").map(\.count).reduce(0, +) == 5)
    }
    try await collector.store.close()
  }
}
