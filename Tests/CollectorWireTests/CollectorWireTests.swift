import CollectorWire
import Foundation
import Testing
import WireJSON

@Suite("CollectorWire")
struct CollectorWireTests {
  @Test func aBatchRoundTripsThroughJSON() throws {
    let batch = CollectorBatch(
      sentAt: 1_800_000_000_123,
      context: EventContext([
        .appName: "Trendyol", .appVersion: "5.12.0", .appBuild: "5120", .osName: "iOS", .osVersion: "17.4.1",
        .platform: "iOS", .deviceModel: "iPhone15,2", .locale: "tr_TR", .timeZone: "Europe/Istanbul",
        .libraryName: "CoreTracker", .libraryVersion: "0.1.0",
      ]),
      events: [
        CollectorEvent(
          id: "0193a4f2-6c1e-7abc-8def-0123456789ab", name: "add_to_cart", kind: "action", timestamp: 1_800_000_000_000,
          utcOffsetMinutes: 180,
          parameters: ["s": .string("x"), "i": .int(-3), "d": .double(2.5), "b": .bool(true)],
          anonymousId: "anon", userId: "u", sessionId: 1_800_000_000
        )
      ],
      counters: [CollectorCounter(name: "Foregrounded app", count: 3, firstCountedAt: 1_799_999_999_000)]
    )
    let decoded = try JSONDecoder().decode(CollectorBatch.self, from: JSONEncoder().encode(batch))
    // `Codable` does not keep an object's key order (the collector's parser does): compared by key.
    #expect(decoded.events.map(\.keysSorted) == batch.events.map(\.keysSorted))
    #expect(decoded.context == batch.context && decoded.counters == batch.counters && decoded.sentAt == batch.sentAt)
  }

  @Test(arguments: [
    ("true", JSONValue.bool(true)), ("false", .bool(false)), ("42", .int(42)), ("-7", .int(-7)),
    ("2.5", .double(2.5)), ("1e3", .int(1000)), ("1.5e-1", .double(0.15)), ("\"text\"", .string("text")),
    ("\"true\"", .string("true")), ("[1,\"a\"]", .array([.int(1), .string("a")])),
    ("{\"price\":9.5,\"tags\":[]}", .object(["price": .double(9.5), "tags": .array([])])),
  ])
  func valuesKeepTheirJSONType(json: String, value: JSONValue) throws {
    #expect(try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)) == value)
  }

  @Test(arguments: [("null", ""), ("[null]", "[0]"), ("{\"a\":null}", ".a")])
  func nullIsNotAParameterValue(json: String, path: String) throws {
    let decoded = try BatchDecoder.decode(Self.body(parameters: #"{"p":\#(json)}"#))
    #expect(decoded.events.isEmpty)
    #expect(decoded.rejected.map(\.field) == ["events[0].parameters.p" + path])
  }

  @Test func parametersKeepTheirTrackedOrder() throws {
    let body = Self.body(parameters: #"{"z":1,"a":{"y":true,"b":[2]},"m":"x"}"#)
    let event = try #require(try BatchDecoder.decode(body).events.first)
    #expect(event.parameters.keys == ["z", "a", "m"])
    #expect(EventRules.storedParameters(event.parameters) == #"{"z":1,"a":{"y":true,"b":[2]},"m":"x"}"#)
  }

  /// A batch of one event whose parameters are the JSON text `parameters`.
  static func body(parameters: String) -> [UInt8] {
    let event = CollectorEvent(id: "e", name: "n", kind: "event", timestamp: 1, anonymousId: "a")
    let batch = CollectorBatch(sentAt: 1, context: EventContext { "x\($0.rawValue)" }, events: [event])
    let text = String(decoding: BatchWriter.batch(batch), as: UTF8.self)
    return Array(text.replacingOccurrences(of: #""parameters":{}"#, with: #""parameters":"# + parameters).utf8)
  }

  @Test func theSimpleAnalyticsPayloadUsesItsSnakeCaseKeys() throws {
    let item = SimpleAnalyticsItem(description: "Liked", timestamp: "2023-03-22T10:15:30-07:00", parameters: ["a": "b"])
    let payload = SimpleAnalyticsPayload(
      deviceID: "d", appName: "A", appVersion: "12", systemVersion: "14.4", platform: "macOS", items: [item],
      counters: [SimpleAnalyticsCounter(name: "c", count: 2, timestamp: "2023-03-22T10:15:30-07:00")]
    )
    let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(payload)) as? [String: Any])
    #expect(
      Set(json.keys) == ["device_id", "app_name", "app_version", "system_version", "platform", "items", "counters"])
    let firstItem = try #require((json["items"] as? [[String: Any]])?.first)
    #expect(Set(firstItem.keys) == ["description", "timestamp", "parameters"])
    #expect(try JSONDecoder().decode(SimpleAnalyticsPayload.self, from: JSONEncoder().encode(payload)) == payload)
  }

  @Test func aPayloadWithTheContextPerEntryDecodes() throws {
    let json = """
      {"items":[{"description":"x","timestamp":"2023-03-22T10:15:30-07:00","device_id":"d1","app_name":"A",
      "app_version":"3","system_version":"17.0","platform":"iOS (iPhone)"}],"counters":[]}
      """
    let payload = try SimpleAnalyticsDecoder.decode(Array(json.utf8))
    #expect(payload.context["device_id"] == nil)
    #expect(payload.items.first?.context["device_id"] == "d1")
    #expect(payload.items.first?.context["platform"] == "iOS (iPhone)")
  }

  @Test func theLimitsAreTheDocumentedOnes() {
    #expect(CollectorLimits.maximumEventBytes == 32 * 1024)
    #expect(CollectorLimits.maximumRequestBytes == 500 * 1024)
    #expect(CollectorLimits.maximumEventsPerBatch == 2500)
  }
}

@Suite("JSONWriter")
struct JSONWriterTests {
  @Test func writesObjectsArraysAndScalars() {
    var json = JSONWriter()
    json.beginObject()
    json.member("name", "add_to_cart")
    json.key("values")
    json.beginArray()
    json.int(1)
    json.double(2.5)
    json.bool(false)
    json.null()
    json.double(.nan)
    json.raw(Array("{\"x\":1}".utf8))
    json.endArray()
    json.endObject()
    #expect(
      String(decoding: json.bytes, as: UTF8.self) == #"{"name":"add_to_cart","values":[1,2.5,false,null,null,{"x":1}]}"#
    )
  }

  /// Differential: whatever string goes in, Foundation's parser reads the same string back.
  @Test func escapedStringsParseBackExactly() throws {
    var random = SystemRandomNumberGenerator()
    let alphabet: [Character] = [
      "a", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1f}", "\u{7f}", "ü", "😀", "/", " ", "\u{2028}",
    ]
    for _ in 0..<500 {
      let text = String(
        (0..<Int.random(in: 0...20, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
      var json = JSONWriter()
      json.beginArray()
      json.string(text)
      json.endArray()
      let parsed = try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String]
      #expect(parsed == [text])
    }
  }

  @Test(arguments: [0.1, -1e-7, 1e300, 123456789.125, Double.leastNonzeroMagnitude])
  func doublesRoundTrip(value: Double) throws {
    var json = JSONWriter()
    json.beginArray()
    json.double(value)
    json.endArray()
    #expect(try JSONDecoder().decode([Double].self, from: Data(json.bytes)) == [value])
  }
}
