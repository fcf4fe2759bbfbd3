import CollectorServer
import CollectorStore
import CoreTracker
import Delivery
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MixpanelService
import NIOCore
import TestSupport
import Testing

/// Mixpanel's `/track` on the collector: the token in each event is the write key, every event is
/// stored or quarantined (never with its token), the answer is Mixpanel's `1` / `{status, error}`.
@Suite("Mixpanel /track")
struct MixpanelTrackTests {
  static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

  static func event(_ name: String, _ id: String, distinct: String = "d-1", token: String = writeKey) -> String {
    #"{"event":"\#(name)","properties":{"token":"\#(token)","distinct_id":"\#(distinct)","time":\#(now),"$insert_id":"\#(id)","plan":"pro"}}"#
  }

  static func post(_ client: some TestClientProtocol, _ body: String, query: String = "?verbose=1", form: Bool = false)
    async throws -> (HTTPResponse.Status, String)
  {
    try await client.execute(
      uri: "/track\(query)", method: .post,
      headers: [.contentType: form ? "application/x-www-form-urlencoded" : "application/json"],
      body: ByteBuffer(string: body)
    ) { ($0.status, String(buffer: $0.body)) }
  }

  @Test func eventsAreStoredOrQuarantinedAndNeitherKeepsTheToken() async throws {
    let collector = try await makeCollector()
    let body = "[\(Self.event("Signed Up", "i-1")),\(Self.event("Signed Up", "i-2", distinct: "undefined"))]"
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.post(client, body)
      #expect(status == .ok && text == #"{"status":1,"error":null}"#, "\(text)")
      #expect(try await Self.post(client, body, query: "").1 == "1", "a resend: stored once, answered 1")
    }
    let stored = try await collector.store.events(app: "ty", limit: 10)
    #expect(stored.map(\.name) == ["Signed Up"])
    #expect(
      stored.allSatisfy { !$0.parametersJSON.contains(writeKey) }
        && stored.first?.parametersJSON.contains("plan") == true)
    let kept = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: true)
    #expect(kept.count == 1)
    #expect(kept.allSatisfy { !$0.entry.contains(writeKey) && !$0.entry.contains("\"token\"") })
    #expect(kept.first?.reasons.first?.contains("distinct_id") == true)
  }

  @Test func theFormFieldDataAsBase64() async throws {
    let collector = try await makeCollector()
    let data = Data(Self.event("Opened", "f-1").utf8).base64EncodedString()
    let encoded = data.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await Self.post(client, "data=\(encoded)", form: true)
      #expect(status == .ok && text.contains(#""status":1"#), "\(text)")
    }
    #expect(try await collector.store.eventCount(app: "ty") == 1)
  }

  @Test(
    arguments: [
      (
        "a wrong token", "[\(MixpanelTrackTests.event("X", "w-1", token: "not-a-key"))]",
        HTTPResponse.Status.unauthorized
      ),
      ("no token", #"[{"event":"X","properties":{"distinct_id":"d","time":1}}]"#, .unauthorized),
      ("not JSON", "[nope", .badRequest),
    ] as [(String, String, HTTPResponse.Status)])
  func aRequestRefusedWholeSaysStatus0(label: String, body: String, status: HTTPResponse.Status) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (answered, text) = try await Self.post(client, body)
      #expect(answered == status, "\(label): \(text)")
      #expect(text.hasPrefix(#"{"status":0,"error":"#), "\(label): \(text)")
    }
    #expect(try await collector.store.eventCount(app: "ty") == 0)
  }

  /// The client's own `/track` mode, over real HTTP on loopback: every event stored, none twice.
  @Test func theMixpanelServicesTrackModeDeliversToTheCollector() async throws {
    let collector = try await makeCollector()
    let directory = TemporaryDirectory()
    let folder = directory.url
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let base = URL(string: "http://127.0.0.1:\(try #require(client.port))")!
      let mixpanel = try MixpanelService(
        mode: .track(token: writeKey), directory: folder, host: base,
        retry: RetryPolicy(initialDelay: 0.05, maximumDelay: 0.2), policy: FlushPolicy(count: 10, interval: nil))
      let tracker = Tracker(services: [mixpanel], configuration: TrackerConfiguration(emitsSessionEvents: false))
      for index in 0..<25 { tracker.track("Song Played", ["index": .int(index)]) }
      await tracker.flush()
      #expect(tracker.stats.services[.mixpanel]?.delivered == 25)
      await tracker.shutdown()
    }
    let stored = try await collector.store.events(app: "ty", limit: 100)
    #expect(stored.count == 25 && Set(stored.map(\.eventID)).count == 25)
    #expect(stored.allSatisfy { !$0.parametersJSON.contains(writeKey) })
  }
}
