import CollectorServer
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import TestSupport
import Testing

/// The quarantine through HTTP: refused entries kept with their reasons, seen by a read key, fixed by
/// the configuration and replayed by an admin, exactly once.
@Suite("Quarantine")
struct QuarantineTests {
  /// The rules the refused entries pass once relaxed: longer descriptions, older events.
  static func relaxedRules(_ configuration: inout CollectorConfiguration) {
    configuration.maximumFreeTextBytes = 4_096
    configuration.maximumEventAgeDays = 60
  }

  static let long = String(repeating: "d", count: 2_000)

  /// One SimpleAnalytics item with a description over the default 1 KiB, one fine; one native event
  /// 40 days old (over the default 30), one fine.
  static func refuse(_ client: some TestClientProtocol) async throws {
    let time = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-60))
    let payload = """
      {"device_id":"q1","app_name":"Shop","items":[{"description":"\(long)","timestamp":"\(time)"},\
      {"description":"Fine","timestamp":"\(time)"}],"counters":[]}
      """
    let sa = try await client.execute(
      uri: "/v1/simple-analytics?key=\(writeKey)", method: .post, body: ByteBuffer(string: payload)
    ) { ($0.status, String(buffer: $0.body)) }
    #expect(sa.0 == .ok && sa.1.contains("quarantined 1"), "\(sa.1)")
    let old = Batches.event("old-1", at: Batches.now - 40 * 86_400_000)
    let native = try await client.execute(
      uri: "/v1/batch", method: .post, headers: [.authorization: "Bearer \(writeKey)"],
      body: ByteBuffer(bytes: Batches.body([old, Batches.event("new-1")]))
    ) { ($0.status, String(buffer: $0.body)) }
    #expect(native.0 == .ok && native.1.contains("older than 30 days"), "\(native.1)")
  }

  static func call(
    _ client: some TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get, key: String = adminKey
  ) async throws -> (HTTPResponse.Status, String) {
    try await client.execute(uri: uri, method: method, headers: [.authorization: "Bearer \(key)"]) {
      ($0.status, String(buffer: $0.body))
    }
  }

  @Test("quarantine, raise the limits in the configuration, replay: stored once; a second replay adds nothing")
  func replayAfterAFix() async throws {
    let path = TestFiles.unique("quarantine")
      .appendingPathComponent("collector.sqlite").path
    let before = try await makeCollector(path: path)
    try await before.application(closesStore: false).test(.router) { client async throws in
      try await Self.refuse(client)
      let (listed, list) = try await Self.call(client, "/v1/quarantine?app=ty", key: readKey)
      #expect(listed == .ok && list.contains("items[0].description") && list.contains("events[0].timestamp"))
      let (_, counts) = try await Self.call(client, "/v1/quarantine/counts", key: readKey)
      #expect(counts.contains(#""reason":"description: must be at most 1024 bytes without U+0000""#), "\(counts)")
      #expect(try await Self.call(client, "/v1/quarantine/replay", method: .post, key: readKey).0 == .forbidden)
      // Replayed under the same rules, both stay, with their reasons.
      let (_, same) = try await Self.call(client, "/v1/quarantine/replay", method: .post)
      #expect(same.contains(#""kept":2"#) && same.contains(#""stored":0"#), "\(same)")
    }
    try await before.shutdown()
    let after = try await makeCollector(
      path: path,
      configure: Self.relaxedRules)
    try await after.application(closesStore: false).test(.router) { client async throws in
      let (status, replay) = try await Self.call(client, "/v1/quarantine/replay", method: .post)
      #expect(status == .ok && replay.contains(#""stored":2"#) && replay.contains(#""kept":0"#), "\(replay)")
      let (_, second) = try await Self.call(client, "/v1/quarantine/replay", method: .post)
      #expect(second.contains(#""stored":0"#), "\(second)")
      let (_, top) = try await Self.call(client, "/v1/reports/top-events?app=ty&from=2020-01-01", key: readKey)
      #expect(top.contains(Self.long) && top.contains("product_viewed"), "\(top.prefix(300))")
      let (_, audit) = try await Self.call(client, "/v1/audit")
      #expect(audit.contains("quarantine-replay") && audit.contains("2 stored"))
    }
    let events = try await after.store.events(app: "ty", limit: 100)
    #expect(events.filter { $0.name == Self.long }.count == 1 && events.filter { $0.eventID == "old-1" }.count == 1)
    #expect(events.count == 4)
    #expect(try await after.store.quarantined(app: "ty", limit: 10, includeReplayed: false).isEmpty)
    #expect(try await after.store.quarantined(app: "ty", limit: 10, includeReplayed: true).count == 2)
    try await after.store.close()
  }

  @Test("a replay cut short after storing and run again stores nothing twice")
  func interruptedReplay() async throws {
    let path = TestFiles.unique("quarantine")
      .appendingPathComponent("collector.sqlite").path
    let before = try await makeCollector(path: path)
    try await before.application(closesStore: false).test(.router) { client async throws in
      try await Self.refuse(client)
    }
    try await before.shutdown()
    // Every entry's rows are committed, then the collector "dies" before recording any outcome.
    let cut = try await makeCollector(
      store: { CutShort($0) }, path: path,
      configure: Self.relaxedRules)
    try await cut.application(closesStore: false).test(.router) { client async throws in
      #expect(try await Self.call(client, "/v1/quarantine/replay", method: .post).0 == .serviceUnavailable)
    }
    try await cut.shutdown()
    let again = try await makeCollector(
      path: path,
      configure: Self.relaxedRules)
    try await again.application(closesStore: false).test(.router) { client async throws in
      let (_, replay) = try await Self.call(client, "/v1/quarantine/replay", method: .post)
      #expect(replay.contains(#""stored":2"#), "\(replay)")
    }
    let events = try await again.store.events(app: "ty", limit: 100)
    #expect(events.count == 4 && Set(events.map(\.eventID)).count == 4)
    try await again.store.close()
  }

  @Test("the dashboard shows the quarantine to readers and replays it for admins, CSRF token required")
  func dashboardPage() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      try await Self.refuse(client)
      let admin = try #require(try await signIn(client, key: adminKey).cookie)
      let reader = try #require(try await signIn(client, key: readKey).cookie)
      let (pageStatus, page, _) = try await DashboardTests.get(client, "/dashboard/quarantine?app=ty", cookie: admin)
      #expect(pageStatus == .ok, "\(pageStatus)")
      #expect(page.contains("description: must be at most 1024 bytes") && page.contains("timestamp: is older than"))
      #expect(page.contains(#"action="/quarantine/replay""#))
      let (_, overview, _) = try await DashboardTests.get(client, "/?app=ty", cookie: admin)
      #expect(overview.contains(#"<span class="name">Quarantined</span><span class="value">2</span>"#))
      let (readerStatus, readerPage, _) = try await DashboardTests.get(
        client, "/dashboard/quarantine?app=ty", cookie: reader)
      #expect(readerStatus == .ok && !readerPage.contains("/quarantine/replay"))
      let token = try await SecurityTests.csrf(client, cookie: admin)
      let uri = "/quarantine/replay"
      #expect(
        try await SecurityTests.request(client, uri, method: .post, cookie: admin, body: "app=ty").status == .forbidden)
      let readerToken = try await SecurityTests.csrf(client, cookie: reader)
      let byReader = try await SecurityTests.request(
        client, uri, method: .post, cookie: reader, body: "app=ty&csrf=\(readerToken)")
      #expect(byReader.status == .forbidden)
      let done = try await SecurityTests.request(
        client, uri, method: .post, cookie: admin, body: "app=ty&csrf=\(token)")
      #expect(done.status == .seeOther && done.headers[.location]?.contains("replayed=0%20stored") == true)
      let (_, after, _) = try await DashboardTests.get(client, done.headers[.location] ?? "/", cookie: admin)
      #expect(after.contains("Replayed: 0 stored, 2 still refused."))
    }
  }

  @Test("refused GA4 and Mixpanel events are quarantined; a fixed limit and a replay store the Mixpanel one")
  func vendorRoutes() async throws {
    let path = TestFiles.unique("quarantine")
      .appendingPathComponent("collector.sqlite").path
    let before = try await makeCollector(path: path)
    let old = Int64(Date().timeIntervalSince1970) - 40 * 86_400
    try await before.application(closesStore: false).test(.router) { client async throws in
      let ga4 = #"""
        {"app_instance_id":"0123456789abcdef0123456789abcdef","events":[{"name":"ok_event","params":{}},
        {"name":"_reserved","params":{}}]}
        """#
      let collect = try await client.execute(
        uri: "/mp/collect?firebase_app_id=1:1:ios:x&api_secret=\(writeKey)", method: .post,
        body: ByteBuffer(string: ga4)
      ) { $0.status }
      #expect(collect == .ok)
      let ndjson = [
        #"{"event":"Fresh","properties":{"distinct_id":"u-1","time":\#(old + 40 * 86_400 - 60),"$insert_id":"f1"}}"#,
        #"{"event":"Old","properties":{"distinct_id":"u-1","time":\#(old),"$insert_id":"o1"}}"#,
      ].joined(separator: "\n")
      let basic = "Basic " + Data("\(writeKey):".utf8).base64EncodedString()
      let imported = try await client.execute(
        uri: "/import?strict=1", method: .post, headers: [.authorization: basic], body: ByteBuffer(string: ndjson)
      ) { $0.status }
      #expect(imported == .badRequest)
    }
    let held = try await before.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(Set(held.map(\.route)) == ["ga4_collect", "mixpanel_import"], "\(held)")
    #expect(held.first { $0.route == "ga4_collect" }?.entry.contains("_reserved") == true)
    #expect(held.first { $0.route == "ga4_collect" }?.entry.contains("ok_event") == false)
    try await before.shutdown()
    let after = try await makeCollector(path: path, configure: { $0.maximumEventAgeDays = 60 })
    try await after.application(closesStore: false).test(.router) { client async throws in
      let (_, replay) = try await Self.call(client, "/v1/quarantine/replay", method: .post)
      #expect(replay.contains(#""stored":1"#) && replay.contains(#""kept":1"#), "\(replay)")
    }
    let names = try await after.store.events(app: "ty", limit: 10).map(\.name).sorted()
    #expect(names == ["Fresh", "Old", "ok_event"])
    try await after.store.close()
  }

  @Test("purging needs an admin key and a time; it deletes what arrived before it")
  func purge() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      try await Self.refuse(client)
      #expect(
        try await Self.call(client, "/v1/quarantine?before=2999-01-01", method: .delete, key: readKey).0 == .forbidden)
      #expect(try await Self.call(client, "/v1/quarantine", method: .delete).0 == .badRequest)
      let (_, kept) = try await Self.call(client, "/v1/quarantine?before=2020-01-01", method: .delete)
      #expect(kept.contains(#""deleted":0"#))
      let (_, gone) = try await Self.call(client, "/v1/quarantine?before=2999-01-01", method: .delete)
      #expect(gone.contains(#""deleted":2"#), "\(gone)")
    }
  }
}

/// A store that forgets every replay's outcome with an error: what a collector killed between
/// committing a replayed entry and recording it leaves behind.
final class CutShort: ForwardingEventStore, @unchecked Sendable {
  let base: any EventStore
  init(_ base: any EventStore) { self.base = base }
  func resolveQuarantined(id: String, replayedAt: Int64?, reasons: [String]) async throws {
    throw StoreError.unavailable("killed (test)")
  }
}
