import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import GA4Wire
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MixpanelWire
import NIOCore
import Testing

/// The vendor-compatible endpoints through Hummingbird's test client: GA4's codes and Mixpanel's
/// strict partial success, and what reached the store.
@Suite("Vendor-compatible routes")
struct VendorRouteTests {
  static var nowMicros: Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

  static func ga4(
    _ client: some TestClientProtocol, _ body: [UInt8], debug: Bool = false, secret: String = writeKey
  ) async throws -> (HTTPResponse.Status, String) {
    let path = debug ? "/debug/mp/collect" : "/mp/collect"
    return try await client.execute(
      uri: "\(path)?firebase_app_id=1:1:ios:a&api_secret=\(secret)", method: .post,
      headers: [.contentType: "application/json"], body: ByteBuffer(bytes: body)
    ) { ($0.status, String(buffer: $0.body)) }
  }

  static func request(_ events: [GA4Event], instance: String? = "a1b2", properties: [String: GA4UserProperty] = [:])
    -> [UInt8]
  {
    Array(try! JSONEncoder().encode(GA4Request(appInstanceID: instance, userProperties: properties, events: events)))
  }

  static func event(_ name: String, _ params: [String: GA4Value] = [:], micros: Int64? = nil) -> GA4Event {
    GA4Event(
      name: name, params: ["session_id": .int(1_800_000_000), "engagement_time_msec": .int(5)].merging(params) { $1 },
      timestampMicros: micros ?? nowMicros)
  }

  /// Each documented limit, on the server side: the validation endpoint names the field and the
  /// code the Firebase service reports for the same event.
  @Test(
    arguments: [
      ("bad name", request([event("moment-like")]), "events", GA4ValidationCode.nameInvalid),
      ("long name", request([event(String(repeating: "a", count: 41))]), "events", .valueOutOfBounds),
      ("reserved prefix", request([event("google_like")]), "events", .nameReserved),
      ("reserved name", request([event("first_open")]), "events", .nameReserved),
      ("bad parameter", request([event("like", ["item id": .string("x")])]), "events[0].params.item id", .nameInvalid),
      (
        "reserved parameter", request([event("like", ["ga_x": .int(1)])]), "events[0].params.ga_x", .nameReserved
      ),
      (
        "long value", request([event("like", ["v": .string(String(repeating: "v", count: 101))])]),
        "events[0].params.v", .valueOutOfBounds
      ),
      (
        "26 parameters",
        request([event("like", Dictionary(uniqueKeysWithValues: (0..<24).map { ("p\($0)", GA4Value.int(Int64($0))) }))]
        ),
        "events[0].params", .exceededMaxEntities
      ),
      ("26 events", request(Array(repeating: event("like"), count: 26)), "events", .exceededMaxEntities),
      ("no app instance", request([event("like")], instance: nil), "app_instance_id", .valueRequired),
      (
        "older than 72 hours", request([event("like", micros: nowMicros - 73 * 3_600_000_000)]),
        "events[0].timestamp_micros", .valueInvalid
      ),
      (
        "long user property",
        request([event("like")], properties: ["a_name_longer_than_24_chars": .init(value: .int(1))]),
        "user_properties.a_name_longer_than_24_chars", .valueOutOfBounds
      ),
      (
        "reserved user property", request([event("like")], properties: ["first_open_time": .init(value: .int(1))]),
        "user_properties.first_open_time", .nameReserved
      ),
      (
        "consent neither granted nor denied",
        Array(
          #"{"app_instance_id":"a1b2","consent":{"ad_user_data":"YES"},"events":[{"name":"like"}]}"#.utf8),
        "consent.ad_user_data", .valueInvalid
      ),
      (
        "long user property value",
        request([event("like")], properties: ["tier": .init(value: .string(String(repeating: "t", count: 37)))]),
        "user_properties.tier", .valueOutOfBounds
      ),
    ] as [(String, [UInt8], String, GA4ValidationCode)]
  )
  func theValidationEndpointAnswersGA4sCodes(label: String, body: [UInt8], field: String, code: GA4ValidationCode)
    async throws
  {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.ga4(client, body, debug: true)
      #expect(status == .ok)
      let answer = try JSONDecoder().decode(GA4ValidationResponse.self, from: Data(text.utf8))
      #expect(answer.violations.map(\.fieldPath) == [field], "\(label): \(text)")
      #expect(answer.violations.map(\.code) == [code], "\(label)")
    }
    #expect(try await collector.store.eventCount(app: "ty") == 0)
  }

  @Test func aBodyOf130kBOrMoreIsRefusedWhole() async throws {
    let collector = try await makeCollector()
    let big = Self.event(
      "like",
      Dictionary(uniqueKeysWithValues: (0..<23).map { ("p\($0)", GA4Value.string(String(repeating: "😀", count: 100))) })
    )
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.ga4(client, Self.request(Array(repeating: big, count: 14)))
      #expect(status == .ok)
      #expect(text.contains("VALUE_OUT_OF_BOUNDS") && text.contains("130000"))
    }
    #expect(try await collector.store.eventCount(app: "ty") == 0)
  }

  @Test func collectStoresTheValidEventsOnceAndNamesWhatItDropped() async throws {
    let collector = try await makeCollector()
    let body = Self.request([
      Self.event("screen_view", ["screen_name": .string("Home")]), Self.event("bad-name"),
      Self.event("select_content", ["item_id": .string("moment-id-1-user-id-2"), "item_name": .string("moment-like")]),
    ])
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.ga4(client, body)
      #expect(status == .ok)
      #expect(text.contains(#""fieldPath":"events""#) && text.contains("index [1]") && text.contains("NAME_INVALID"))
      let (again, _) = try await Self.ga4(client, body)
      #expect(again == .ok)
      let (valid, empty) = try await Self.ga4(client, Self.request([Self.event("share")]))
      #expect(valid == .noContent && empty.isEmpty)
      let (denied, _) = try await Self.ga4(client, body, secret: "nope")
      #expect(denied == .unauthorized)
      let (malformed, message) = try await Self.ga4(client, Array("{\"events\":7}".utf8))
      #expect(malformed == .badRequest && message.contains("validationMessages"))
    }
    let events = try await collector.store.events(app: "ty", limit: 10).sorted { $0.name < $1.name }
    #expect(events.map(\.name) == ["screen_view", "select_content", "share"])
    #expect(events[0].kind == "screen_view" && events[0].deviceID == "a1b2" && events[0].sessionID == 1_800_000_000)
    #expect(events[1].parametersJSON.contains(#""item_id":"moment-id-1-user-id-2""#))
    #expect(events[0].context[.libraryName] == "GA4 Measurement Protocol")
  }

  /// A body that is not a Measurement Protocol request: a 400 whose message names where, in JSON's
  /// words; no decoder, Swift type or `DecodingError` text reaches the answer.
  @Test(arguments: [
    (#"{"events":7}"#, "events", "is not a list"),
    (#"{"app_instance_id":7,"events":[]}"#, "app_instance_id", "is not a string"),
    // Foundation's decoder reports a number too large for its field as invalid JSON, without a place.
    (#"{"app_instance_id":"a","timestamp_micros":1e30,"events":[]}"#, "", "a number too large"),
    (#"{"app_instance_id":"a","timestamp_micros":9223372036854775808,"events":[]}"#, "", "a number too large"),
    (#"{"events":[{"name":"a"}"#, "", "is not valid JSON"),
  ])
  func aMalformedGA4BodyIsNamedInJSONsWords(body: String, field: String, words: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.ga4(client, Array(body.utf8))
      #expect(status == .badRequest)
      #expect(text.contains(#""fieldPath":"\#(field)""#) && text.contains(words), "\(text)")
      Self.expectNoDecoderText(text)
    }
  }

  /// An event that does not decode — a list or an object where a value goes, a name that is not a
  /// string — is set aside alone: the other events are stored, the answer (GA4 answers 2xx)
  /// names where and why, and the event waits in the quarantine with that reason.
  @Test(arguments: [
    (#"{"name":"flagged","params":{"flag":[1,2]}}"#, "events[1].params.flag", "a string, a number"),
    (#"{"name":"nested","params":{"x":{"y":1}}}"#, "events[1].params.x", "a string, a number"),
    (#"{"name":7}"#, "events[1].name", "is not a string"),
    (#"{"params":{}}"#, "events[1].name", "is required"),
  ])
  func anEventThatDoesNotDecodeIsSetAsideAlone(event: String, field: String, words: String) async throws {
    let collector = try await makeCollector()
    let micros = Self.nowMicros
    let valid =
      #"{"name":"share","params":{"session_id":1800000000,"engagement_time_msec":5},"timestamp_micros":\#(micros)}"#
    let body =
      #"{"app_instance_id":"a1b2","events":[\#(valid),\#(event),\#(valid.replacingOccurrences(of: "share", with: "login"))]}"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.ga4(client, Array(body.utf8))
      #expect(status == .ok)
      #expect(text.contains(#""fieldPath":"\#(field)""#) && text.contains(words), "\(text)")
      Self.expectNoDecoderText(text)
    }
    let stored = try await collector.store.events(app: "ty", limit: 10).map(\.name).sorted()
    #expect(stored == ["login", "share"])
    let quarantined = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(quarantined.count == 1)
    #expect(quarantined.first?.reasons.contains { $0.hasPrefix(field) } == true, "\(quarantined)")
  }

  /// `session_id` as Google's own examples send it (a string, `"123"`) or as a number: the same
  /// session; text that is no number names none.
  @Test(arguments: [
    (GA4Value.string("123"), Int64?.some(123)), (.int(123), 123), (.double(123), 123), (.string("abc"), nil),
  ])
  func sessionIDAsTextOrNumber(session: GA4Value, expected: Int64?) async throws {
    let collector = try await makeCollector()
    let body = Self.request([Self.event("share", ["session_id": session])])
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.ga4(client, body)
      #expect(status == .noContent, "\(text)")
    }
    let events = try await collector.store.events(app: "ty", limit: 10)
    #expect(events.map(\.sessionID) == [expected])
  }

  /// A web stream's request — `measurement_id` in the URL, `client_id` in the body, Google's own
  /// example — is stored as an app stream's is, the client id as the device.
  @Test func aWebStreamsRequestIsStored() async throws {
    let collector = try await makeCollector()
    let body =
      #"{"client_id":"123456.7654321","events":[{"name":"login","params":{"method":"Google","session_id":"123","engagement_time_msec":100}}]}"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await client.execute(
        uri: "/mp/collect?measurement_id=G-XXXXXXXXXX&api_secret=\(writeKey)", method: .post,
        headers: [.contentType: "application/json"], body: ByteBuffer(string: body)
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(status == .noContent, "\(text)")
      let (neither, why) = try await client.execute(
        uri: "/mp/collect?api_secret=\(writeKey)", method: .post, headers: [.contentType: "application/json"],
        body: ByteBuffer(string: body)
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(neither == .badRequest && why.contains("measurement_id"), "\(why)")
      let (noDevice, noDeviceWhy) = try await client.execute(
        uri: "/mp/collect?measurement_id=G-XXXXXXXXXX&api_secret=\(writeKey)", method: .post,
        headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"events":[{"name":"login"}]}"#)
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(noDevice == .ok && noDeviceWhy.contains("client_id"), "\(noDeviceWhy)")
    }
    let events = try await collector.store.events(app: "ty", limit: 10)
    #expect(events.map(\.name) == ["login"])
    #expect(events.first?.deviceID == "123456.7654321" && events.first?.sessionID == 123)
    #expect(events.first?.context[.appName] == "G-XXXXXXXXXX")
  }

  static func expectNoDecoderText(_ text: String) {
    for leak in ["DecodingError", "codingPath", "Int64", "Swift.", "CodingKeys", "debugDescription", "Dictionary"] {
      #expect(!text.contains(leak), "\(leak) in \(text)")
    }
  }

  // MARK: Mixpanel

  static func mixpanel(
    _ client: some TestClientProtocol, _ body: String, user: String = writeKey, password: String = ""
  ) async throws -> (HTTPResponse.Status, MixpanelImportResponse) {
    let (status, text) = try await mixpanelText(client, body, user: user, password: password)
    return (status, try JSONDecoder().decode(MixpanelImportResponse.self, from: Data(text.utf8)))
  }

  /// `/import` with Basic auth, its answer as text.
  static func mixpanelText(
    _ client: some TestClientProtocol, _ body: String, strict: Bool = true, user: String = writeKey,
    password: String = ""
  ) async throws -> (HTTPResponse.Status, String) {
    let credential = Data("\(user):\(password)".utf8).base64EncodedString()
    return try await client.execute(
      uri: "/import?strict=\(strict ? 1 : 0)", method: .post,
      headers: [.contentType: "application/json", .authorization: "Basic \(credential)"],
      body: ByteBuffer(string: body)
    ) { ($0.status, String(buffer: $0.body)) }
  }

  static func mixpanelEvent(_ name: String, insertID: String, time: Int64? = nil, extra: String = "") -> String {
    let time = time ?? Int64(Date().timeIntervalSince1970 * 1000)
    return
      #"{"event":"\#(name)","properties":{"distinct_id":"u-1","time":\#(time),"$insert_id":"\#(insertID)","$os":"iOS","Listing":"l-1"\#(extra)}}"#
  }

  /// Mixpanel's documented 400 (docs.mixpanel.com, "400 Bad Request"): a top-level `error`, and
  /// `failed_records` whose rows carry `insert_id`; placeholder `distinct_id`s and `$insert_id`s
  /// (`anonymous`, `null`, `undefined`, …, in any case) are refused.
  @Test(arguments: [
    ("anonymous", "p-1", "properties.distinct_id"), ("NULL", "p-2", "properties.distinct_id"),
    ("undefined", "p-3", "properties.distinct_id"),
    ("00000000-0000-0000-0000-000000000000", "p-4", "properties.distinct_id"),
    ("u-1", "none", "properties.$insert_id"), ("u-1", "N/A", "properties.$insert_id"),
  ])
  func importAnswersMixpanelsDocumentedShape(distinctID: String, insertID: String, field: String) async throws {
    let collector = try await makeCollector()
    let time = Int64(Date().timeIntervalSince1970 * 1000)
    let body =
      "[" + Self.mixpanelEvent("Kept", insertID: "k-1") + ","
      + #"{"event":"Refused","properties":{"distinct_id":"\#(distinctID)","time":\#(time),"$insert_id":"\#(insertID)"}}"#
      + "]"
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.mixpanelText(client, body)
      #expect(status == .badRequest)
      #expect(text.contains(#""error":"some data points in the request failed validation""#), "\(text)")
      #expect(text.contains(#""insert_id":"\#(insertID)""#) && !text.contains(#""$insert_id""#), "\(text)")
      #expect(text.contains(#""field":"\#(field)""#) && text.contains(#""num_records_imported":1"#), "\(text)")
    }
  }

  /// `strict=0`: Mixpanel's 200 with the rows stored, whatever the others hold; those are kept in the
  /// quarantine with their reasons (an acknowledgement that loses nothing).
  @Test func importWithoutStrictAnswers200AndQuarantinesTheRest() async throws {
    let collector = try await makeCollector()
    let body =
      "[" + Self.mixpanelEvent("Kept", insertID: "n-1") + "," + Self.mixpanelEvent("Bad", insertID: "bad id!") + "]"
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.mixpanelText(client, body, strict: false)
      #expect(
        status == .ok && text.contains(#""num_records_imported":1"#) && !text.contains("failed_records"), "\(text)")
    }
    #expect(try await collector.store.events(app: "ty", limit: 10).map(\.name) == ["Kept"])
    let quarantined = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(quarantined.count == 1 && quarantined.first?.reasons.first?.contains("$insert_id") == true)
  }

  @Test func importIsStrictPartialSuccessAndDeduplicates() async throws {
    let collector = try await makeCollector()
    let long = String(repeating: "n", count: 300)
    let body =
      "["
      + [
        Self.mixpanelEvent("Listing Liked", insertID: "a-1"),
        Self.mixpanelEvent("Listing Liked", insertID: "bad id!"),
        Self.mixpanelEvent("Too Old", insertID: "a-3", time: 1_000),
        #"{"event":"No Id","properties":{"distinct_id":"u","time":\#(Int64(Date().timeIntervalSince1970))}}"#,
        Self.mixpanelEvent("Long", insertID: "a-5", extra: #","Note":"\#(long)""#),
        "7",
      ].joined(separator: ",") + "]"
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, answer) = try await Self.mixpanel(client, body)
      #expect(status == .badRequest)
      #expect(answer.numRecordsImported == 2)
      #expect(answer.failedRecords?.map(\.index) == [1, 2, 3, 5])
      #expect(
        answer.failedRecords?.map(\.field) == [
          "properties.$insert_id", "properties.time", "properties.$insert_id", "",
        ])
      let (again, second) = try await Self.mixpanel(client, body)
      #expect(again == .badRequest && second.numRecordsImported == 2)
      // NDJSON, and a service account (the secret is the key).
      let ndjson =
        Self.mixpanelEvent("Offer Made", insertID: "b-1") + "\n" + Self.mixpanelEvent("Offer Made", insertID: "b-2")
      let (ok, imported) = try await Self.mixpanel(client, ndjson, user: "svc.account", password: writeKey)
      #expect(ok == .ok && imported.numRecordsImported == 2 && imported.status == "OK")
      let (denied, refusal) = try await Self.mixpanel(client, ndjson, user: "nope")
      #expect(denied == .unauthorized && refusal.error != nil)
      let (malformed, why) = try await Self.mixpanel(client, "[{")
      #expect(malformed == .badRequest && why.error?.contains("JSON") == true)
      let tooMany = "[" + (0..<2001).map { Self.mixpanelEvent("E", insertID: "m-\($0)") }.joined(separator: ",") + "]"
      let (refused, _) = try await Self.mixpanel(client, tooMany)
      #expect(refused == .badRequest)
    }
    let events = try await collector.store.events(app: "ty", limit: 10).sorted { $0.name < $1.name }
    #expect(events.map(\.name) == ["Listing Liked", "Long", "Offer Made", "Offer Made"])
    #expect(events[0].deviceID == "u-1" && events[0].context[.osName] == "iOS")
    #expect(events[0].parametersJSON == #"{"Listing":"l-1"}"#)
    #expect(events[1].parametersJSON.contains(String(repeating: "n", count: 255) + "\""))
  }
}
