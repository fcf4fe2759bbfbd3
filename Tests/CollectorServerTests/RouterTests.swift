import CollectorIngest
import CollectorRuntime
import CollectorServer
import CollectorStore
import CollectorWire
import Delivery
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The HTTP surface through Hummingbird's test client (no sockets): status codes, bodies, headers
/// and what reached the store.
@Suite("Collector routes")
struct RouterTests {
  typealias Headers = HTTPFields

  static func post(
    _ client: some TestClientProtocol, _ uri: String, _ body: [UInt8], key: String? = writeKey,
    gzip: Bool = false
  ) async throws -> (HTTPResponse.Status, String, HTTPFields) {
    var headers: HTTPFields = [.contentType: "application/json"]
    if let key { headers[.authorization] = "Bearer \(key)" }
    if gzip { headers[.contentEncoding] = "gzip" }
    let payload = gzip ? Gzip.compress(body) : body
    return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(bytes: payload)) {
      ($0.status, String(buffer: $0.body), $0.headers)
    }
  }

  @Test("a valid batch is stored and answered with the partial-success response", arguments: [false, true])
  func validBatch(gzip: Bool) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let body = Batches.body((0..<5).map { Batches.event("e\($0)") })
      let (status, text, _) = try await Self.post(client, "/v1/batch", body, gzip: gzip)
      #expect(status == .ok)
      #expect(text == #"{"accepted":5,"rejected":[]}"#)
    }
    #expect(try await collector.store.eventCount(app: "ty") == 5)
  }

  @Test("invalid events are rejected one by one and the rest is stored")
  func partialSuccess() async throws {
    let collector = try await makeCollector()
    var events = [
      Batches.event("ok-1"), Batches.event("ok-2"), Batches.event("old", at: Batches.now - 40 * 86_400_000),
    ]
    events[1].name = ""
    let json = String(decoding: Batches.body(events), as: UTF8.self)
      .replacingOccurrences(of: #""id":"ok-1""#, with: #""id":"ok-1","color":"red""#)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text, _) = try await Self.post(client, "/v1/batch", Array(json.utf8))
      #expect(status == .ok)
      let response = try JSONDecoder().decode(BatchResponse.self, from: Data(text.utf8))
      #expect(response.accepted == 0)
      #expect(response.rejected.map(\.index) == [0, 1, 2])
      #expect(response.rejected.map(\.field) == ["events[0].color", "events[1].name", "events[2].timestamp"])
      #expect(response.rejected[2].reason == "is older than 30 days")
    }
    #expect(try await collector.store.eventCount(app: nil) == 0)
  }

  @Test("retries are de-duplicated and clock skew is corrected")
  func retriesAndSkew() async throws {
    let collector = try await makeCollector()
    let now = Batches.now
    // The device's clock runs one hour behind: the event happened 10 s before sending.
    let skewed = now - 3_600_000
    let body = Batches.body([Batches.event("skew-1", at: skewed - 10_000)], sentAt: skewed)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for _ in 0..<3 { #expect(try await Self.post(client, "/v1/batch", body).0 == .ok) }
      // A device an hour ahead: clamped to the receive time.
      let ahead = Batches.body([Batches.event("ahead-1", at: now + 3_600_000)], sentAt: now)
      #expect(try await Self.post(client, "/v1/batch", ahead).0 == .ok)
    }
    let stored = try await collector.store.events(app: "ty", limit: 10)
    #expect(stored.count == 2)
    let corrected = try #require(stored.first { $0.eventID == "skew-1" })
    // Skew correction: occurred = timestamp + (received − sentAt) = received − 10 s, exactly, however
    // long the request took (a wall-clock tolerance failed under ThreadSanitizer on a busy machine).
    #expect(corrected.occurredAt == corrected.receivedAt - 10_000)
    #expect(corrected.receivedAt >= now)
    let clamped = try #require(stored.first { $0.eventID == "ahead-1" })
    #expect(clamped.occurredAt == clamped.receivedAt)
  }

  @Test(
    "keys are required and checked",
    arguments: [
      (nil, HTTPResponse.Status.unauthorized), ("wrong-key-0123456789", .unauthorized), (adminKey, .forbidden),
    ]
  )
  func authentication(key: String?, expected: HTTPResponse.Status) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text, _) = try await Self.post(client, "/v1/batch", Batches.body([Batches.event("a")]), key: key)
      #expect(status == expected)
      #expect(text.contains(#""field":"key""#))
    }
    #expect(try await collector.store.eventCount(app: nil) == 0)
  }

  @Test("revoked keys stop working")
  func revocation() async throws {
    let collector = try await makeCollector()
    let record = try #require(try await collector.store.key(hash: AccessKeys.hash(writeKey)))
    #expect(try await collector.store.revokeKey(id: record.id, at: 1))
    let fresh = KeyRing(store: collector.store)
    #expect(try await fresh.authenticate(writeKey) == nil)
    #expect(try await fresh.authenticate(adminKey)?.scope == .admin)
  }

  @Test("bodies over the limits are refused with 413")
  func limits() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      // More than 500 KB as sent.
      let large = Batches.body((0..<1500).map { Batches.event("large-\($0)-" + String(repeating: "x", count: 300)) })
      #expect(large.count > CollectorLimits.maximumRequestBytes)
      #expect(try await Self.post(client, "/v1/batch", large).0 == .contentTooLarge)
      // A gzip bomb: 6 MB of spaces compress to a few KB, and inflating stops at 5 MB.
      let bomb = Array("{\"context\":".utf8) + [UInt8](repeating: 0x20, count: 6 * 1024 * 1024)
      let (status, text, _) = try await Self.post(client, "/v1/batch", bomb, gzip: true)
      #expect(status == .contentTooLarge)
      #expect(text.contains("inflates to more than"))
      // More than 2500 events (small enough to fit 500 KB gzip'd).
      let many = Batches.body((0..<2501).map { Batches.event("m\($0)") })
      #expect(try await Self.post(client, "/v1/batch", many, gzip: true).0 == .contentTooLarge)
      // An unknown content encoding.
      let encoded = try await client.execute(
        uri: "/v1/batch", method: .post, headers: [.authorization: "Bearer \(writeKey)", .contentEncoding: "br"],
        body: ByteBuffer(bytes: Batches.body([]))
      ) { $0.status }
      #expect(encoded == .unsupportedMediaType)
    }
    #expect(try await collector.store.eventCount(app: nil) == 0)
  }

  @Test("the rate limit answers 429 with Retry-After")
  func rateLimit() async throws {
    let collector = try await makeCollector(rateLimit: 1)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      // The bucket holds 2500 events (one full batch).
      let first = Batches.body((0..<2500).map { Batches.event("r\($0)") })
      #expect(try await Self.post(client, "/v1/batch", first, gzip: true).0 == .ok)
      // 100 more events need 100 s of refill at 1 event/s.
      let over = Batches.body((0..<100).map { Batches.event("over-\($0)") })
      let (status, _, headers) = try await Self.post(client, "/v1/batch", over)
      #expect(status == .tooManyRequests)
      #expect(headers[.retryAfter].flatMap(Int.init).map { $0 >= 1 } == true)
    }
    #expect(try await collector.store.eventCount(app: nil) == 2500)
  }

  @Test("a storage failure answers 503 and acknowledges nothing; health says so")
  func storageFailure() async throws {
    nonisolated(unsafe) var flaky: FlakyStore!
    let collector = try await makeCollector { base in
      flaky = FlakyStore(base)
      return flaky
    }
    try await collector.application(closesStore: false).test(.router) { client async throws in
      flaky.failing = true
      let (status, text, headers) = try await Self.post(client, "/v1/batch", Batches.body([Batches.event("x")]))
      #expect(status == .serviceUnavailable)
      #expect(headers[.retryAfter] != nil)
      #expect(text.contains("nothing was stored"))
      let health = try await client.execute(uri: "/health", method: .get) { $0.status }
      #expect(health == .serviceUnavailable)
      flaky.failing = false
      #expect(try await Self.post(client, "/v1/batch", Batches.body([Batches.event("x")])).0 == .ok)
      let healthy = try await client.execute(uri: "/health", method: .get) { String(buffer: $0.body) }
      #expect(healthy.contains(#""status":"ok""#))
    }
    #expect(try await collector.store.eventCount(app: nil) == 1)
  }

  @Test("SimpleAnalytics payloads are taken as the client sends them, key in the URL")
  func simpleAnalytics() async throws {
    let collector = try await makeCollector()
    let payload = """
      {"device_id":"dev-1","app_name":"Shop","app_version":"412","system_version":"17.4.1","platform":"iOS (iPhone)",
       "items":[
         {"description":"Opened product","timestamp":"2026-11-20T10:15:30-07:00","parameters":{"id":"p-1"}},
         {"description":"Opened cart","timestamp":"2026-11-20T10:16:00.250+03:00","platform":"iOS (iPad)"},
         {"description":"Broken","timestamp":"yesterday"}
       ],
       "counters":[{"name":"Foregrounded","count":4,"timestamp":"2026-11-20T09:00:00Z"}]}
      """
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let uri = "/v1/simple-analytics?key=\(writeKey)"
      let (first, answer, _) = try await Self.post(client, uri, Array(payload.utf8), key: nil)
      // A refused item is quarantined and the request answered 2xx: every entry is stored or kept.
      #expect(first == .ok)
      #expect(
        answer.contains("stored 2 items (0 already stored) and 1 counters; quarantined 1")
          && answer.contains("items[2].timestamp"), "\(answer)")
      // A resend after a lost reply: the same entries first, then a new one: only it is new.
      let resend = payload.replacingOccurrences(
        of: #"{"description":"Broken","timestamp":"yesterday"}"#,
        with:
          #"{"description":"Broken","timestamp":"yesterday"},{"description":"Paid","timestamp":"2026-11-20T10:17:00Z"}"#
      )
      let (second, again, _) = try await Self.post(client, uri, Array(resend.utf8), key: nil)
      #expect(second == .ok && again.contains("stored 1 items (2 already stored) and 1 counters"), "\(again)")
      let (status, text, _) = try await Self.post(client, "/v1/simple-analytics", Array(payload.utf8), key: nil)
      #expect(status == .unauthorized)
      #expect(text.hasPrefix(#"{"message":"#))
    }
    let events = try await collector.store.events(app: "ty", limit: 10)
    #expect(events.map(\.name) == ["Opened cart", "Paid", "Opened product"])
    #expect(events.map { $0.context[.platform] } == ["iOS (iPad)", "iOS (iPhone)", "iOS (iPhone)"])
    #expect(events.map(\.utcOffsetMinutes) == [180, 0, -420])
    #expect(events[2].occurredAt == 1_795_194_930_000)  // 2026-11-20T17:15:30Z
    #expect(try await collector.store.counters(app: "ty").map(\.count) == [4])
  }

  @Test("erasure needs the admin key and removes one device's events")
  func erasure() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let body = Batches.body([Batches.event("a", device: "d1"), Batches.event("b", device: "d2")])
      #expect(try await Self.post(client, "/v1/batch", body).0 == .ok)
      let denied = try await client.execute(
        uri: "/v1/events?app=ty&deviceId=d1", method: .delete, headers: [.authorization: "Bearer \(writeKey)"]
      ) { $0.status }
      #expect(denied == .forbidden)
      let missing = try await client.execute(
        uri: "/v1/events?app=ty", method: .delete, headers: [.authorization: "Bearer \(adminKey)"]
      ) { $0.status }
      #expect(missing == .badRequest)
      let text = try await client.execute(
        uri: "/v1/events?app=ty&deviceId=d1", method: .delete, headers: [.authorization: "Bearer \(adminKey)"]
      ) { String(buffer: $0.body) }
      #expect(text == #"{"deleted":1,"events":1,"counters":0,"devices":1}"#)
    }
    #expect(try await collector.store.events(app: "ty", limit: 10).map(\.deviceID) == ["d2"])
  }

  @Test("metrics count requests by route and status, events by outcome")
  func metrics() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var events = [Batches.event("m1"), Batches.event("m2"), Batches.event("m3", at: Batches.now - 40 * 86_400_000)]
      events[1].kind = ""
      _ = try await Self.post(client, "/v1/batch", Batches.body(events))
      _ = try await Self.post(client, "/v1/batch", Batches.body(events), key: nil)
      let refused = try await client.execute(uri: "/metrics", method: .get) { $0.status }
      #expect(refused == .unauthorized)
      let text = try await client.execute(
        uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(readKey)"]
      ) { String(buffer: $0.body) }
      #expect(text.contains(#"collector_requests_total{route="batch",status="200"} 1"#))
      #expect(text.contains(#"collector_requests_total{route="batch",status="401"} 1"#))
      #expect(text.contains(#"collector_events_accepted_total{route="batch"} 1"#))
      #expect(text.contains(#"collector_events_rejected_total{reason="invalid"} 1"#))
      #expect(text.contains(#"collector_events_rejected_total{reason="too_old"} 1"#))
      #expect(text.contains("collector_commit_seconds_bucket"))
      #expect(text.contains("collector_queue_depth_rows 0"))
    }
  }
}
