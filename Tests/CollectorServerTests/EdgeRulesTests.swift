import CollectorReports
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The edges an attacker tried: an empty user id is no user, an empty device id is refused, a GA4
/// instance id with a NUL is refused (never 2xx and dropped), and commerce amounts and currencies
/// are checked; whatever is refused is quarantined with its reason.
@Suite("Edge rules")
struct EdgeRulesTests {
  static func native(_ client: some TestClientProtocol, _ events: [CollectorEvent]) async throws -> String {
    try await client.execute(
      uri: "/v1/batch", method: .post, headers: [.authorization: "Bearer \(writeKey)"],
      body: ByteBuffer(bytes: Batches.body(events))
    ) { String(buffer: $0.body) }
  }

  @Test("an empty userId is no user; an empty anonymousId is refused and quarantined")
  func emptyIDs() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var noUser = Batches.event("u0")
      noUser.userId = ""
      let answer = try await Self.native(client, [noUser, Batches.event("a0", device: "")])
      #expect(answer.contains(#""accepted":1"#) && answer.contains("events[1].anonymousId"), "\(answer)")
    }
    let stored = try await collector.store.events(app: "ty", limit: 10)
    #expect(stored.map(\.eventID) == ["u0"] && stored.first?.userID == nil)
    #expect(try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false).count == 1)
  }

  static let commerce: [(String, String, String?)] = [
    ("purchase", #"{"currency":"usd","value":1}"#, "parameters.currency"),
    ("purchase", #"{"currency":"<script>","value":1}"#, "parameters.currency"),
    ("purchase", #"{"currency":"TRY","value":1e20}"#, "parameters.value"),
    (
      "purchase", #"{"currency":"TRY","items":[{"item_id":"a","price":1e14,"quantity":1000000}]}"#,
      "parameters.items[0].price"
    ),
    ("purchase", #"{"currency":"TRY","items":[{"item_id":"a","price":-5}]}"#, "parameters.items[0].price"),
    ("refund", #"{"currency":"TRY","value":-5,"items":[{"item_id":"a","price":-5}]}"#, nil),
    // A refund that says neither how much nor what (CommerceOrder no longer sends a made-up 0).
    ("refund", #"{"transaction_id":"T-1","currency":"TRY","items":[]}"#, "parameters.value"),
    ("refund", #"{"transaction_id":"T-1","currency":"TRY"}"#, "parameters.value"),
    ("refund", #"{"transaction_id":"T-1","currency":"TRY","items":[{"item_id":"a","price":5}]}"#, nil),
    ("purchase", #"{"currency":"TRY","value":129.9,"items":[{"item_id":"a","price":64.95,"quantity":2}]}"#, nil),
  ]

  @Test(
    "commerce amounts are range-checked, currencies are ISO 4217, negative prices only on a refund", arguments: commerce
  )
  func commerceRules(name: String, parameters: String, field: String?) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var event = Batches.event("c0")
      event.name = name
      event.parameters = try JSONDecoder().decode(JSONObject.self, from: Data(parameters.utf8))
      let answer = try await Self.native(client, [event])
      if let field {
        #expect(answer.contains(#""accepted":0"#) && answer.contains("events[0].\(field)"), "\(answer)")
      } else {
        #expect(answer.contains(#""accepted":1"#), "\(answer)")
      }
    }
    let held = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(held.count == (field == nil ? 0 : 1))
  }

  @Test("a key given twice refuses its event on every route, with the path, and quarantines it")
  func duplicateKeys() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let ga4 = #"""
        {"app_instance_id":"0123456789abcdef0123456789abcdef","events":[{"name":"ok_event","params":{}},
        {"name":"twice","params":{"value":1,"value":2}}]}
        """#
      let collect = try await client.execute(
        uri: "/mp/collect?firebase_app_id=1:1:ios:x&api_secret=\(writeKey)", method: .post,
        body: ByteBuffer(string: ga4)
      ) { String(buffer: $0.body) }
      #expect(collect.contains("events[1].params.value"), "\(collect)")
      let now = Int64(Date().timeIntervalSince1970)
      let mixpanel =
        #"[{"event":"Ok","properties":{"distinct_id":"u","time":\#(now),"$insert_id":"i1"}},"#
        + #"{"event":"Twice","properties":{"distinct_id":"u","time":\#(now),"$insert_id":"i2","plan":"a","plan":"b"}}]"#
      let basic = "Basic " + Data("\(writeKey):".utf8).base64EncodedString()
      let imported = try await client.execute(
        uri: "/import?strict=1", method: .post, headers: [.authorization: basic], body: ByteBuffer(string: mixpanel)
      ) { String(buffer: $0.body) }
      #expect(imported.contains("properties.plan") && imported.contains("appears twice"), "\(imported)")
    }
    #expect(Set(try await collector.store.events(app: "ty", limit: 10).map(\.name)) == ["ok_event", "Ok"])
    let held = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(Set(held.map(\.route)) == ["ga4_collect", "mixpanel_import"])
  }

  @Test("every name a report lists can be opened: a tab or a line break in it, or an empty one")
  func namesAsSent() async throws {
    let collector = try await makeCollector()
    let time = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-60))
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let payload = """
        {"device_id":"n1","app_name":"Shop","items":[{"description":"Line\\nbreak","timestamp":"\(time)"},\
        {"description":"Tab\\there","timestamp":"\(time)"},{"description":"","timestamp":"\(time)"},\
        {"description":"Other","timestamp":"\(time)"},{"description":"Other","timestamp":"\(time)"}],"counters":[]}
        """
      let stored = try await client.execute(
        uri: "/v1/simple-analytics?key=\(writeKey)", method: .post, body: ByteBuffer(string: payload)
      ) { String(buffer: $0.body) }
      #expect(stored.contains("stored 5 items"), "\(stored)")
      for (name, encoded) in [("Line\nbreak", "Line%0Abreak"), ("Tab\there", "Tab%09here"), ("", "")] {
        let (status, rows) = try await client.execute(
          uri: "/v1/reports/events?app=ty&event=\(encoded)", method: .get,
          headers: [.authorization: "Bearer \(readKey)"]
        ) { ($0.status, String(buffer: $0.body)) }
        #expect(status == .ok, "\(encoded): \(rows)")
        let decoded = try JSONDecoder().decode(EventRows.self, from: Data(rows.utf8))
        #expect(decoded.rows.map(\.name) == [name], "\(encoded)")
      }
      let session = try #require(try await signIn(client, key: readKey).cookie)
      let (_, page, _) = try await DashboardTests.get(client, "/dashboard/events?app=ty&event=", cookie: session)
      #expect(page.contains(#"<h2>Latest  <a class="csv""#), "the empty name's own rows (the title ends in it)")
      #expect(!page.contains("<h2>Latest Other"))
    }
  }

  /// End to end on a real store: parameters sent in an order come back from the events report in
  /// that order, at every depth (the collector's parser, the stored text and the answer keep it).
  @Test func parametersKeepTheirOrderFromTheBatchToTheReport() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var event = Batches.event("ordered")
      event.parameters = [
        "zeta": .int(1), "alpha": .object(["y": .bool(true), "b": .array([.int(2)])]), "mid": .string("x"),
      ]
      let answer = try await Self.native(client, [event])
      #expect(answer.contains(#""accepted":1"#), "\(answer)")
      let body = try await client.execute(
        uri: "/v1/reports/events?app=ty", method: .get, headers: [.authorization: "Bearer \(readKey)"]
      ) { String(buffer: $0.body) }
      #expect(body.contains(#""parameters":{"zeta":1,"alpha":{"y":true,"b":[2]},"mid":"x"}"#), "\(body)")
    }
  }

  /// The events report answers each event's parameters as a JSON object (keys in their stored
  /// order, values typed), never as a string holding JSON.
  @Test func eventRowsCarryTheirParametersAsJSONObjects() async throws {
    let collector = try await makeCollector()
    let now = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
    let stored = StoredEvent(
      app: "ty", eventID: "e-1", name: "purchase", kind: "action", occurredAt: now, utcOffsetMinutes: 0,
      receivedAt: now, deviceID: "d-1", userID: nil, sessionID: nil, context: EventContext(),
      parametersJSON: #"{"value":19.5,"items":[{"item_id":"a","quantity":2}],"gift":false,"note":null}"#)
    _ = try await collector.store.write(StoreBatch(events: [stored]))
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let body = try await client.execute(
        uri: "/v1/reports/events?app=ty", method: .get, headers: [.authorization: "Bearer \(readKey)"]
      ) { String(buffer: $0.body) }
      #expect(
        body.contains(#""parameters":{"value":19.5,"items":[{"item_id":"a","quantity":2}],"gift":false,"note":null}"#),
        "\(body)")
      // JSONDecoder reads keys sorted (Codable has no order): the answer's text above shows the order.
      let decoded = try JSONDecoder().decode(EventRows.self, from: Data(body.utf8))
      #expect(
        decoded.rows.first?.parameters["items"]
          == .array([.object(["item_id": .string("a"), "quantity": .int(2)])]))
      var sorted = stored
      sorted.parametersJSON = #"{"gift":false,"items":[{"item_id":"a","quantity":2}],"note":null,"value":19.5}"#
      #expect(decoded == EventRows(rows: [EventRows.Row(sorted)], next: nil), "every stored field, as stored")
    }
  }

  @Test("SimpleAnalytics' app_name is a dimension: breakdown by=app-name, and every report's appName filter")
  func appNameDimension() async throws {
    let collector = try await makeCollector()
    let time = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-60))
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for (device, name, items) in [("d1", "Shop", 2), ("d2", "Shop Lite", 1)] {
        let entries = (0..<items).map { #"{"description":"Open \#($0)","timestamp":"\#(time)"}"# }
        let payload =
          #"{"device_id":"\#(device)","app_name":"\#(name)","items":[\#(entries.joined(separator: ","))],"counters":[]}"#
        _ = try await client.execute(
          uri: "/v1/simple-analytics?key=\(writeKey)", method: .post, body: ByteBuffer(string: payload)
        ) { $0.status }
      }
      let (status, text) = try await client.execute(
        uri: "/v1/reports/breakdown?app=ty&by=app-name&format=csv", method: .get,
        headers: [.authorization: "Bearer \(readKey)"]
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(status == .ok && text.contains("Shop,2,1") && text.contains("Shop Lite,1,1"), "\(text)")
      func report(_ name: String, _ extra: String = "") async throws -> (HTTPResponse.Status, String) {
        try await client.execute(
          uri: "/v1/reports/\(name)?app=ty&appName=Shop%20Lite\(extra)", method: .get,
          headers: [.authorization: "Bearer \(readKey)"]
        ) { ($0.status, String(buffer: $0.body)) }
      }
      let (_, overview) = try await report("overview")
      #expect(overview.contains(#""events":1"#), "\(overview)")
      for name in ["top-events", "active-devices", "retention", "sessions", "counters", "events", "timeseries"] {
        #expect(try await report(name).0 == .ok, "\(name)")
      }
      #expect(try await report("funnel", "&steps=Open%200,Open%201").0 == .ok)
      let (refused, why) = try await report("revenue")
      #expect(refused == .badRequest && why.contains("appName"), "\(why)")
    }
  }

  @Test("a GA4 app_instance_id with a NUL is refused (not 2xx and dropped) and quarantined")
  func ga4NUL() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let body = #"{"app_instance_id":"abc\u0000def","events":[{"name":"screen_view","params":{}}]}"#
      for path in ["/debug/mp/collect", "/mp/collect"] {
        let answer = try await client.execute(
          uri: "\(path)?firebase_app_id=1:1:ios:x&api_secret=\(writeKey)", method: .post, body: ByteBuffer(string: body)
        ) { ($0.status, String(buffer: $0.body)) }
        #expect(answer.0 == .ok && answer.1.contains("app_instance_id"), "\(path): \(answer)")
      }
    }
    #expect(try await collector.store.eventCount(app: "ty") == 0)
    let held = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(held.map(\.route) == ["ga4_collect"] && held.first?.reasons.first?.contains("app_instance_id") == true)
  }
}
