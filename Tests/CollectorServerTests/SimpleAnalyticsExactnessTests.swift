import CollectorServer
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The SimpleAnalytics client, unmodified on the wire: one-second timestamps, no ids, resends after a
/// failure or a lost reply, and a 2xx deletes what it sent.
@Suite("SimpleAnalytics exactness")
struct SimpleAnalyticsExactnessTests {
  static func payload(_ items: [(String, String)], counters: String = "") -> [UInt8] {
    let entries = items.map { description, time in
      #"{"description":"\#(description)","timestamp":"\#(time)","parameters":{"screen":"home"}}"#
    }
    return Array(
      """
      {"device_id":"sa-1","app_name":"Shop","app_version":"7","system_version":"17.4","platform":"iOS (iPhone)",\
      "items":[\(entries.joined(separator: ","))],"counters":[\(counters)]}
      """.utf8)
  }

  static func post(_ client: some TestClientProtocol, _ body: [UInt8]) async throws -> (Int, String) {
    try await client.execute(
      uri: "/v1/simple-analytics?key=\(writeKey)", method: .post, body: ByteBuffer(bytes: body)
    ) { (Int($0.status.code), String(buffer: $0.body)) }
  }

  static var second: String {
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: Date().addingTimeInterval(-60))
  }

  @Test("three identical taps in one second are three events; a resend with more stores only the more")
  func identicalItems() async throws {
    let collector = try await makeCollector()
    let time = Self.second
    let taps = Array(repeating: ("Refresh", time), count: 3)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      #expect(try await Self.post(client, Self.payload(taps)).0 == 200)
      #expect(try await collector.store.eventCount(app: "ty") == 3)
      // A lost reply: the client resends the items first, a new identical tap after them.
      let resent = try await Self.post(client, Self.payload(taps + [("Refresh", time)]))
      #expect(resent.0 == 200)
      #expect(resent.1.contains("stored 1 items (3 already stored)"), "\(resent.1)")
      #expect(try await collector.store.eventCount(app: "ty") == 4)
      // The same four again, nothing more: a burst of identical taps submitted twice looks the same,
      // so it is read as new (nothing lost) and counted as ambiguous.
      let equal = try await Self.post(client, Self.payload(taps + [("Refresh", time)]))
      #expect(equal.1.contains("stored 4 items (0 already stored)"), "\(equal.1)")
      #expect(try await collector.store.eventCount(app: "ty") == 8)
      let metrics = try await client.execute(
        uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(readKey)"]
      ) { String(buffer: $0.body) }
      #expect(metrics.contains("collector_simple_analytics_ambiguous_total 1"), "\(metrics)")
    }
  }

  @Test("an empty description is stored; one over the limit is quarantined and the request answered 2xx")
  func descriptions() async throws {
    let collector = try await makeCollector()
    let time = Self.second
    let long = String(repeating: "x", count: 1_025)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      #expect(try await Self.post(client, Self.payload([("", time)])).0 == 200)
      let (status, text) = try await Self.post(client, Self.payload([(long, time), ("Opened", time)]))
      #expect(status == 200, "\(text)")
      #expect(text.contains("quarantined 1") && text.contains("items[0].description"), "\(text)")
      #expect(text.contains("stored 1 items (0 already stored)"), "\(text)")
      // The longest accepted description.
      #expect(try await Self.post(client, Self.payload([(String(repeating: "y", count: 1_024), time)])).0 == 200)
    }
    let names = try await collector.store.events(app: "ty", limit: 10).map(\.name.count).sorted()
    #expect(names == [0, 6, 1_024])
    let held = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(
      held.count == 1 && held.first?.reasons == ["items[0].description: must be at most 1024 bytes without U+0000"])
    #expect(held.first?.entry.contains(long) == true && held.first?.entry.contains("Opened") == false)
  }

  static let counterCases: [([Int64], Int64)] = [([3, 2], 5), ([3, 5], 5), ([3, 3], 3)]

  @Test(
    "counters-only sends in one second: a smaller count adds, a grown or equal one is read as a resend",
    arguments: counterCases)
  func counters(reports: [Int64], total: Int64) async throws {
    let collector = try await makeCollector()
    let time = Self.second
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for count in reports {
        let counter = #"{"name":"Foregrounded","count":\#(count),"timestamp":"\#(time)"}"#
        #expect(try await Self.post(client, Self.payload([], counters: counter)).0 == 200)
      }
    }
    #expect(try await collector.store.counters(app: "ty").map(\.count).reduce(0, +) == total)
  }
}
