import CollectorServer
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A SimpleAnalytics client as the real one behaves on the wire: items and counters kept until a
/// 2xx, everything unacknowledged resent first, counts since the last success with the time of the
/// first count. `lose` makes the collector's answer get lost after it committed.
final class SimpleAnalyticsDevice: @unchecked Sendable {  // one test drives it at a time
  let id: String
  private var items: [(String, String)] = []
  private var counters: [String: (count: Int64, time: String)] = [:]
  private(set) var truth: [String: Int] = [:]
  private(set) var counted: [String: Int64] = [:]

  init(_ id: String) { self.id = id }

  /// A time a minute ago at `second` seconds past a fixed minute: one-second resolution, as sent.
  static func time(_ second: Int = 0) -> String {
    let base = (Int(Date().timeIntervalSince1970) / 60 - 2) * 60 + second
    return ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(base)))
  }

  func add(_ description: String, at time: String = time()) {
    items.append((description, time))
    truth[description, default: 0] += 1
  }

  func count(_ name: String, by amount: Int64 = 1, at time: String = time()) {
    let current = counters[name]
    counters[name] = ((current?.count ?? 0) + amount, current?.time ?? time)
    counted[name, default: 0] += amount
  }

  var body: [UInt8] {
    let entries = items.map { description, time in
      #"{"description":"\#(description)","timestamp":"\#(time)","parameters":{"screen":"home"}}"#
    }
    let totals = counters.sorted { $0.key < $1.key }.map { name, value in
      #"{"name":"\#(name)","count":\#(value.count),"timestamp":"\#(value.time)"}"#
    }
    return Array(
      """
      {"device_id":"\(id)","app_name":"Shop","app_version":"7","system_version":"17.4","platform":"iOS (iPhone)",\
      "items":[\(entries.joined(separator: ","))],"counters":[\(totals.joined(separator: ","))]}
      """.utf8)
  }

  /// Submits what is pending; with `lose`, the answer never arrives and everything stays pending.
  @discardableResult
  func submit(_ client: LoopbackClient, lose: Bool = false) async throws -> (Int, String) {
    let answer = try await client.execute(
      uri: "/v1/simple-analytics?key=\(writeKey)", method: .post, body: ByteBuffer(bytes: body)
    ) { (Int($0.status.code), String(buffer: $0.body)) }
    if (200..<300).contains(answer.0) && !lose {
      items.removeAll()
      counters.removeAll()
    }
    return answer
  }
}

/// The scenarios of issue 27 through HTTP on loopback against a real collector (SQLite file, the
/// router; ``ApplicationProtocol/onLoopback(readTimeout:_:)``, many requests in a row):
/// every item and increment stored exactly once, whatever the client's resends; a poison entry
/// quarantined while everything else is stored and answered 2xx.
@Suite("SimpleAnalytics scenarios")
struct SimpleAnalyticsScenarioTests {
  static func stored(_ collector: EventCollector) async throws -> [String: Int] {
    try await collector.store.events(app: "ty", limit: 100_000).reduce(into: [:]) { $0[$1.name, default: 0] += 1 }
  }

  static func totals(_ collector: EventCollector) async throws -> [String: Int64] {
    try await collector.store.counters(app: "ty").reduce(into: [:]) { $0[$1.name, default: 0] += $1.count }
  }

  @Test("three taps in one second over two submissions are three; a burst every 4 ms loses nothing")
  func newItemsAcrossRequests() async throws {
    let collector = try await makeCollector()
    let device = SimpleAnalyticsDevice("d1")
    try await collector.application(closesStore: false).onLoopback { client async throws in
      device.add("Refresh")
      device.add("Refresh")
      try await device.submit(client)
      device.add("Refresh")
      try await device.submit(client)
      for index in 0..<301 {
        device.add("Burst", at: SimpleAnalyticsDevice.time(index / 250))
        if index % 10 == 9 { try await device.submit(client) }
      }
      try await device.submit(client)
    }
    #expect(try await Self.stored(collector) == device.truth)
  }

  static let counterRuns: [[Int64]] = [[3, 5], [3, 3], [1, 2, 3]]

  @Test("acknowledged submits whose counters start in one second add up", arguments: counterRuns)
  func countersAcrossRequests(counts: [Int64]) async throws {
    let collector = try await makeCollector()
    let device = SimpleAnalyticsDevice("d1")
    try await collector.application(closesStore: false).onLoopback { client async throws in
      for (index, count) in counts.enumerated() {
        device.add("Tap \(index)")
        device.count("Foregrounded", by: count)
        #expect(try await device.submit(client).0 == 200)
      }
    }
    #expect(try await Self.totals(collector) == device.counted)
    #expect(try await Self.stored(collector) == device.truth)
  }

  @Test("lost replies, resends with new entries, replayed bytes, interleaved devices: each entry once")
  func resends() async throws {
    let collector = try await makeCollector()
    let (a, b) = (SimpleAnalyticsDevice("a"), SimpleAnalyticsDevice("b"))
    try await collector.application(closesStore: false).onLoopback { client async throws in
      a.add("Open")
      a.add("Refresh")
      a.count("Launch", by: 2)
      try await a.submit(client, lose: true)  // committed, the answer lost
      b.add("Refresh")
      try await b.submit(client)
      a.add("Refresh")  // new, identical to one already pending
      a.count("Launch")
      try await a.submit(client, lose: true)  // a resend with a new item, lost again
      a.add("Buy")
      let replayed = a.body
      let resent = try await a.submit(client)  // two lost replies in a row, then acknowledged
      #expect(resent.1.contains("(3 already stored)"), "\(resent.1)")
      b.add("Refresh")
      try await b.submit(client)
      // The same bytes again: equal to a remembered submission, which a burst of new identical
      // entries also is, so read as new (the reading that loses nothing; documented and counted).
      let again = try await client.execute(
        uri: "/v1/simple-analytics?key=\(writeKey)", method: .post, body: ByteBuffer(bytes: replayed)
      ) { String(buffer: $0.body) }
      #expect(again.contains("stored 4 items (0 already stored)"), "\(again)")
    }
    let events = try await collector.store.events(app: "ty", limit: 1_000)
    let byDevice = Dictionary(grouping: events, by: \.deviceID).mapValues { $0.count }
    #expect(byDevice == ["a": 4 + 4, "b": 2])
    // Launch: 3 counted on the device; the replayed bytes, read as new, add their 3 again.
    #expect(try await Self.totals(collector) == ["Launch": 3 + 3])
  }

  @Test("a poison entry is quarantined with its reason; the device's later entries are all stored, 2xx")
  func poisonEntry() async throws {
    let collector = try await makeCollector()
    let device = SimpleAnalyticsDevice("d1")
    try await collector.application(closesStore: false).onLoopback { client async throws in
      device.add("Open")
      device.add(String(repeating: "p", count: 1_100))
      device.add("Close")
      let first = try await device.submit(client)
      #expect(first.0 == 200 && first.1.contains("quarantined 1"), "\(first.1)")
      for index in 0..<30 {
        device.add("Later \(index % 3)")
        if index % 10 == 9 { #expect(try await device.submit(client).0 == 200) }
      }
    }
    var expected = device.truth
    expected[String(repeating: "p", count: 1_100)] = nil
    #expect(try await Self.stored(collector) == expected)
    let held = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(held.map(\.reasons) == [["items[1].description: must be at most 1024 bytes without U+0000"]])
  }
}
