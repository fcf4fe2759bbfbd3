import CollectorServer
import CollectorStore
import CollectorVendors
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// Segment's Tracking API on the collector: the bodies of Segment's HTTP API reference and the exact
/// shape analytics-swift writes, stored and reported; the key in the body or as Basic auth; refused
/// calls quarantined with their reasons; Segment's limits.
@Suite("Segment-compatible routes")
struct SegmentRouteTests {
  static var basic: String { "Basic " + Data("\(writeKey):".utf8).base64EncodedString() }

  /// Today, in the form Segment's examples write times.
  static func iso(_ milliseconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
  }

  /// Segment's documented examples (HTTP API reference), with their 2012 day moved to yesterday
  /// (the collector keeps at most `max-event-age-days`; yesterday's 00:30 is in the past at any hour).
  static func documented(_ json: String) -> String {
    let yesterday = String(iso(Batches.now - 86_400_000).prefix(10))
    return json.replacingOccurrences(of: "2012-12-02", with: yesterday)
  }

  static let examples: [(path: String, body: String)] = [
    (
      "/v1/identify",
      #"{"userId":"019mr8mf4r","traits":{"email":"pgibbons@example.com","name":"Peter Gibbons","industry":"Technology"},"context":{"ip":"24.5.68.47"},"timestamp":"2012-12-02T00:30:08.276Z"}"#
    ),
    (
      "/v1/track",
      #"{"userId":"019mr8mf4r","event":"Item Purchased","properties":{"name":"Leap to Conclusions Mat","revenue":14.99},"context":{"ip":"24.5.68.47"},"timestamp":"2012-12-02T00:30:12.984Z"}"#
    ),
    ("/v1/page", #"{"userId":"019mr8mf4r","name":"Tracking HTTP API","timestamp":"2012-12-02T00:31:29.738Z"}"#),
    ("/v1/screen", #"{"userId":"019mr8mf4r","name":"Tracking HTTP API","timestamp":"2012-12-02T00:31:29.738Z"}"#),
    (
      "/v1/group",
      #"{"userId":"019mr8mf4r","groupId":"8e9df332","traits":{"name":"Initech","industry":"Technology","employees":420},"timestamp":"2012-12-02T00:30:12.984Z"}"#
    ),
    (
      "/v1/alias",
      #"{"previousId":"39239-239239-239239-23923","userId":"019mr8mf4r","timestamp":"2012-12-02T00:28:02.273Z"}"#
    ),
  ]

  static let documentedBatch = #"""
    {"batch":[
      {"type":"identify","userId":"019mr8mf4r","traits":{"email":"jake@yahoo.com","name":"Jake Peterson","age":26},"timestamp":"2012-12-02T00:30:08.276Z"},
      {"type":"track","userId":"019mr8mf4r","event":"Song Played","properties":{"name":"Fallin for You","artist":"Dierks Bentley"},"timestamp":"2012-12-02T00:30:12.984Z"},
      {"type":"identify","userId":"971mj8mk7p","traits":{"email":"cindy@gmail.com","name":"Cindy Gonzalez","age":23},"timestamp":"2012-12-02T00:30:08.276Z"},
      {"type":"track","userId":"971mj8mk7p","event":"Song Played","properties":{"name":"Get Lucky","artist":"Daft Punk"},"timestamp":"2012-12-02T00:30:12.984Z"}
    ],"context":{"device":{"type":"phone","name":"Apple iPhone 6"}}}
    """#

  /// A batch file as analytics-swift writes it (`DirectoryStore`: one event per line after
  /// `{ "batch": [`, then `],"sentAt":…,"writeKey":…}`), posted to `/v1/b` with no header.
  static func analyticsSwiftFile(sentAt: Int64, timestamps: [Int64], key: String = writeKey) -> String {
    let lines = timestamps.enumerated().map { index, time in
      #"{"messageId":"6f0e2f7a-1b0c-4d52-9b7e-00000000000\#(index)","type":"track","anonymousId":"A1B2C3D4-0000-4000-8000-000000000001","event":"Product Viewed","properties":{"product_id":"p-\#(index)","price":19.9,"tags":["summer","sale"]},"timestamp":"\#(iso(time))","context":{"app":{"name":"Shop","version":"7.12.0","build":"712","namespace":"com.example.shop"},"device":{"manufacturer":"Apple","type":"ios","model":"iPhone15,2","name":"iPhone","id":"D1"},"os":{"name":"iOS","version":"17.4"},"library":{"name":"analytics-swift","version":"1.6.0"},"locale":"tr-TR","timezone":"Europe/Istanbul","screen":{"width":390,"height":844},"network":{"wifi":true},"instanceId":"i-1"},"integrations":{},"_metadata":{"bundled":[],"unbundled":[],"bundledIds":[]}}"#
    }
    return "{ \"batch\": [\n" + lines.joined(separator: "\n,")
      + "\n],\"sentAt\":\"\(iso(sentAt))\",\"writeKey\":\"\(key)\"}"
  }

  static func post(
    _ client: some TestClientProtocol, _ path: String, _ body: String, authorization: String? = basic
  ) async throws -> (HTTPResponse.Status, String) {
    var headers: HTTPFields = [.contentType: "application/json"]
    if let authorization { headers[.authorization] = authorization }
    return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body)) {
      ($0.status, String(buffer: $0.body))
    }
  }

  static func events(_ collector: EventCollector) async throws -> [StoredEvent] {
    try await collector.store.events(app: "ty", limit: 100).sorted {
      ($0.occurredAt, $0.name) < ($1.occurredAt, $1.name)
    }
  }

  @Test func eachDocumentedCallIsStoredAsItsEvent() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for (path, body) in Self.examples {
        let (status, text) = try await Self.post(client, path, Self.documented(body))
        #expect(status == .ok, "\(path): \(text)")
        #expect(text == #"{"success":true,"stored":1,"quarantined":[]}"#, "\(path)")
      }
    }
    let stored = try await collector.store.events(app: "ty", limit: 100)
    let byKind = Dictionary(uniqueKeysWithValues: stored.map { ($0.kind, $0) })
    #expect(Set(byKind.keys) == ["identify", "event", "page_view", "screen_view", "group", "alias"])
    #expect(byKind["event"]?.name == "Item Purchased")
    #expect(byKind["event"]?.parametersJSON == #"{"name":"Leap to Conclusions Mat","revenue":14.99}"#)
    #expect(byKind["identify"]?.parametersJSON.contains(#""industry":"Technology""#) == true)
    #expect(byKind["screen_view"]?.name == "Tracking HTTP API")
    #expect(
      byKind["group"]?.parametersJSON
        == #"{"groupId":"8e9df332","traits":{"name":"Initech","industry":"Technology","employees":420}}"#)
    #expect(byKind["alias"]?.deviceID == "39239-239239-239239-23923")
    #expect(stored.allSatisfy { $0.userID == "019mr8mf4r" })
    // Without a sentAt the time is the timestamp as sent.
    let sent = Self.documented("2012-12-02T00:30:12.984Z")
    #expect(
      byKind["event"]?.occurredAt
        == Int64(ISO8601DateFormatter.withFraction.date(from: sent)!.timeIntervalSince1970 * 1000))
  }

  @Test func theDocumentedBatchAndItsReportsWithTheKeyInTheBody() async throws {
    let collector = try await makeCollector()
    let body = String(Self.documented(Self.documentedBatch).dropLast()) + #","writeKey":"\#(writeKey)"}"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.post(client, "/v1/batch", body, authorization: nil)
      #expect(status == .ok, "\(text)")
      #expect(text.hasPrefix(#"{"success":true,"stored":4"#))
      let (reportStatus, report) = try await client.execute(
        uri: "/v1/reports/top-events?app=ty", method: .get, headers: [.authorization: "Bearer \(readKey)"]
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(reportStatus == .ok)
      #expect(report.contains(#""name":"Song Played""#) && report.contains(#""count":2"#), "\(report)")
    }
    let stored = try await Self.events(collector)
    #expect(Set(stored.map(\.userID)) == ["019mr8mf4r", "971mj8mk7p"])
    #expect(
      stored.filter { $0.name == "Song Played" }.map(\.parametersJSON).contains(
        #"{"name":"Get Lucky","artist":"Daft Punk"}"#))
    let quarantine = try await collector.store.quarantined(app: nil, limit: 10, includeReplayed: true)
    #expect(quarantine.isEmpty)
  }

  @Test func analyticsSwiftsFileOnSlashBCorrectedForTheDevicesClock() async throws {
    let collector = try await makeCollector()
    let now = Batches.now
    // The device's clock runs an hour ahead: what it calls now is now + 1 h.
    let ahead: Int64 = 3_600_000
    let file = Self.analyticsSwiftFile(sentAt: now + ahead, timestamps: [now + ahead - 60_000, now + ahead - 30_000])
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for path in ["/v1/b", "/b"] {
        let (status, text) = try await Self.post(client, path, file, authorization: nil)
        #expect(status == .ok, "\(path): \(text)")
      }
    }
    let stored = try await Self.events(collector)
    #expect(stored.count == 2, "the second post is a resend: messageId is the event id")
    #expect(stored.map(\.eventID) == ["6f0e2f7a-1b0c-4d52-9b7e-000000000000", "6f0e2f7a-1b0c-4d52-9b7e-000000000001"])
    // Skew-corrected against the arrival: 60 s and 30 s before it by the device's own clock, however
    // long the request took to arrive (the times are written to the millisecond).
    let before = stored.map { $0.receivedAt - $0.occurredAt }
    #expect(before.allSatisfy { abs($0 - 60_000) <= 1 || abs($0 - 30_000) <= 1 }, "\(before)")
    #expect(Set(before.map { ($0 + 500) / 1_000 }) == [60, 30])
    let first = try #require(stored.first)
    #expect(first.deviceID == "A1B2C3D4-0000-4000-8000-000000000001")
    #expect(first.userID == nil)
    #expect(first.utcOffsetMinutes == 180)
    #expect(first.parametersJSON == #"{"product_id":"p-0","price":19.9,"tags":["summer","sale"]}"#)
    #expect(
      first.context[.appName] == "Shop" && first.context[.appVersion] == "7.12.0" && first.context[.appBuild] == "712")
    #expect(
      first.context[.osName] == "iOS" && first.context[.platform] == "iOS"
        && first.context[.deviceModel] == "iPhone15,2")
    #expect(first.context[.libraryName] == "analytics-swift" && first.context[.timeZone] == "Europe/Istanbul")
    #expect(first.context[.locale] == "tr-TR")
  }

  @Test(
    arguments: [
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"track","anonymousId":"a"}]}"#,
        "batch[1].event", "is required for a track call"
      ),
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"track","event":"No one"}]}"#,
        "batch[1].userId", "or anonymousId is required"
      ),
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"click","anonymousId":"a"}]}"#,
        "batch[1].type", "must be one of track, screen, page, identify, group, alias"
      ),
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"track","anonymousId":"a","event":"T","timestamp":"2026-02-30T10:00:00Z"}]}"#,
        "batch[1].timestamp", "must be an ISO 8601 date-time with an offset, e.g. 2023-03-22T10:15:30-07:00"
      ),
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"track","anonymousId":"a","event":"T","properties":[1]}]}"#,
        "batch[1].properties", "must be an object"
      ),
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"group","anonymousId":"a"}]}"#,
        "batch[1].groupId", "is required for a group call"
      ),
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"alias","userId":"u"}]}"#,
        "batch[1].previousId", "is required for an alias call"
      ),
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"track","anonymousId":"a","event":"T","messageId":"\#(String(repeating: "m", count: 100))"}]}"#,
        "batch[1].messageId", "must be 1 to 99 characters without control characters"
      ),
      (
        #"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},{"type":"track","anonymousId":"a","event":"T","properties":{"big":"\#(String(repeating: "x", count: 33_000))"}}]}"#,
        "batch[1]", "the call is larger than 32 KB"
      ),
      (#"{"batch":[{"type":"track","anonymousId":"a","event":"Ok"},7]}"#, "batch[1]", "is not an object"),
    ] as [(String, String, String)])
  func aRefusedCallIsQuarantinedAndTheOthersStored(body: String, field: String, reason: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.post(client, "/v1/batch", body)
      #expect(status == .ok, "Segment answers 200 whatever it drops: \(text)")
      let answer = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
      #expect(answer?["stored"] as? Int == 1)
      let quarantined = answer?["quarantined"] as? [[String: Any]]
      #expect(quarantined?.first?["field"] as? String == field)
      #expect(quarantined?.first?["reason"] as? String == reason)
    }
    #expect(try await collector.store.eventCount(app: "ty") == 1)
    let kept = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: true)
    #expect(kept.map(\.route) == ["segment"])
    #expect(kept.first?.reasons == ["\(field): \(reason)"])
  }

  @Test func aQuarantinedCallKeepsNoKeyAndReplaysOnceItPasses() async throws {
    let path = TestFiles.unique("segment")
      .appendingPathComponent("collector.sqlite").path
    let before = try await makeCollector(path: path) { $0.maximumEventAgeDays = 1 }
    let old = Self.iso(Batches.now - 2 * 86_400_000)
    let body =
      #"{"batch":[{"type":"track","anonymousId":"a","event":"Late","messageId":"m-late","timestamp":"\#(old)"}],"#
      + #""sentAt":"\#(Self.iso(Batches.now))","writeKey":"\#(writeKey)"}"#
    try await before.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.post(client, "/v1/b", body, authorization: nil)
      #expect(status == .ok)
      #expect(text.contains(#""field":"batch[0].timestamp","reason":"is older than 1 days""#), "\(text)")
    }
    let kept = try await before.store.quarantined(app: "ty", limit: 10, includeReplayed: true)
    #expect(kept.count == 1)
    #expect(kept.first.map { !$0.entry.contains(writeKey) && !$0.entry.contains("writeKey") } == true)
    try await before.shutdown()
    let after = try await makeCollector(path: path) { $0.maximumEventAgeDays = 30 }
    try await after.application(closesStore: false).test(.router) { client async throws in
      let replay = { () async throws -> String in
        try await client.execute(
          uri: "/v1/quarantine/replay", method: .post, headers: [.authorization: "Bearer \(adminKey)"]
        ) { String(buffer: $0.body) }
      }
      #expect(try await replay().contains(#""stored":1"#))
      #expect(try await replay().contains(#""stored":0"#))
    }
    #expect(try await after.store.events(app: "ty", limit: 10).map(\.eventID) == ["m-late"])
  }

  @Test func identifyAndAliasTieDevicesToOnePerson() async throws {
    let collector = try await makeCollector()
    let body = #"""
      {"batch":[
        {"type":"track","anonymousId":"anon-1","event":"Browsed"},
        {"type":"identify","anonymousId":"anon-1","userId":"u-1","traits":{"plan":"gold"}},
        {"type":"track","anonymousId":"anon-2","event":"Browsed"},
        {"type":"alias","previousId":"anon-2","userId":"u-1"},
        {"type":"track","anonymousId":"anon-3","event":"Browsed"}
      ]}
      """#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      #expect(try await Self.post(client, "/v1/batch", body).0 == .ok)
      let (status, overview) = try await client.execute(
        uri: "/v1/reports/overview?app=ty", method: .get, headers: [.authorization: "Bearer \(readKey)"]
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(status == .ok)
      #expect(overview.contains(#""devices":3"#) && overview.contains(#""people":2"#), "\(overview)")
    }
  }

  @Test func keysAndLimits() async throws {
    let collector = try await makeCollector()
    let track = #"{"type":"track","anonymousId":"a","event":"Ok"}"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      #expect(try await Self.post(client, "/v1/track", track, authorization: nil).0 == .unauthorized)
      let wrong = "Basic " + Data("not-a-key:".utf8).base64EncodedString()
      #expect(try await Self.post(client, "/v1/track", track, authorization: wrong).0 == .unauthorized)
      let inBody = #"{"event":"Ok","userId":"123","email":"test@example.org","writeKey":"\#(writeKey)"}"#
      #expect(try await Self.post(client, "/v1/track", inBody, authorization: nil).0 == .ok)
      #expect(try await Self.post(client, "/v1/track", track, authorization: "Bearer \(writeKey)").0 == .ok)
      let big = #"{"anonymousId":"a","event":"Big","properties":{"x":"\#(String(repeating: "x", count: 33_000))"}}"#
      let (status, text) = try await Self.post(client, "/v1/track", big)
      #expect(status == .badRequest, "Segment: 400 past 32 KB for one call: \(text)")
      let tooMany = "{\"batch\":[" + Array(repeating: track, count: 2501).joined(separator: ",") + "]}"
      let (manyStatus, manyText) = try await Self.post(client, "/v1/b", tooMany)
      #expect(manyStatus == .badRequest)
      #expect(manyText.contains("at most 2500"))
      #expect(try await Self.post(client, "/v1/b", "[1,2]").0 == .badRequest)
      #expect(try await Self.post(client, "/v1/b", "{\"batch\":").0 == .badRequest)
    }
    #expect(try await collector.store.eventCount(app: "ty") == 2)
  }

  @Test func theNativeBatchStillAnswersOnTheSamePath() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let body = String(decoding: Batches.body([Batches.event("n-1")]), as: UTF8.self)
      let (status, text) = try await Self.post(client, "/v1/batch", body, authorization: "Bearer \(writeKey)")
      #expect(status == .ok)
      #expect(text == #"{"accepted":1,"rejected":[]}"#)
      let (keyless, why) = try await Self.post(client, "/v1/batch", body, authorization: nil)
      #expect(keyless == .unauthorized)
      #expect(why.contains("Bearer"))
    }
  }
}

extension ISO8601DateFormatter {
  static var withFraction: ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }
}
