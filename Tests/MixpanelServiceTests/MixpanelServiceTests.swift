import CoreTracker
import Delivery
import Foundation
import MixpanelService
import MixpanelWire
import ServiceSupport
import TestSupport
import Testing
import WireJSON

private let install = "6F9619FF-8B86-D011-B42D-00CF4FC964FF"
private let counter = LockedCounter()
private let context = TrackingContext(
  appName: "Dolap", appVersion: "3.4.0", appBuild: "340", osName: "iOS", osVersion: "17.4.1", platform: "iOS",
  deviceModel: "iPhone15,2"
)

private func event(_ name: String, _ parameters: EventParameters = [:], user: String? = nil) -> TrackedEvent {
  let now = Date()
  return TrackedEvent(
    id: EventID(high: UInt64(now.timeIntervalSince1970 * 1000) << 16, low: UInt64(counter.next())), name: name,
    parameters: parameters, timestamp: now, context: context, anonymousID: install, userID: user
  )
}

private func sentEvents(_ server: TestHTTPServer) throws -> [MixpanelEvent] {
  try server.requests.flatMap { try JSONDecoder().decode([MixpanelEvent].self, from: Data($0.body)) }
}

private final class Reports: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: [MixpanelViolation] = []
  var all: [MixpanelViolation] { lock.withLock { stored } }
  func add(_ error: any Error) { lock.withLock { stored.append(error as! MixpanelViolation) } }
}

@Suite("MixpanelService", .serialized)
struct MixpanelServiceTests {
  private func service(
    _ server: TestHTTPServer, _ directory: borrowing TemporaryDirectory,
    mode: MixpanelService.Mode = .projectToken("token123"), limits: LimitPolicy = .repair
  ) throws -> MixpanelService {
    try MixpanelService(
      mode: mode, directory: directory.url, host: server.url, limits: limits,
      retry: RetryPolicy(initialDelay: 0.01, maximumDelay: 0.05),
      policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 60)
    )
  }

  @Test func importRequestsCarryAuthGzipAndMixpanelsProperties() async throws {
    let server = try await TestHTTPServer.start { _ in
      TestResponse(status: 200, body: #"{"code":200,"num_records_imported":1,"status":"OK"}"#)
    }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let mixpanel = try service(server, directory)
    let before = Int64(Date().timeIntervalSince1970 * 1000)
    for index in 0..<4_500 {
      mixpanel.receive(event("Listing Liked", ["Listing": .string("l-\(index)")], user: index == 0 ? "u-7" : nil))
    }
    let after = Int64(Date().timeIntervalSince1970 * 1000)
    await mixpanel.flush()
    let requests = server.requests
    let events = try sentEvents(server)
    #expect(requests.count == 3)
    #expect(events.count == 4_500)
    let first = try #require(requests.first)
    #expect(first.uri == "/import?strict=1")
    #expect(first.headers["authorization"] == "Basic " + Data("token123:".utf8).base64EncodedString())
    #expect(first.headers["content-encoding"] == "gzip")
    #expect(requests.allSatisfy { $0.body.count <= MixpanelLimits.maximumRequestBytes })
    let liked = events[0].properties
    #expect(liked["distinct_id"] == .string("u-7") && liked["$user_id"] == .string("u-7"))
    #expect(events[1].properties["distinct_id"] == .string(install))
    #expect(liked["$device_id"] == .string(install))
    #expect(liked["$os"] == .string("iOS") && liked["$app_version_string"] == .string("3.4.0"))
    #expect(liked["Listing"] == .string("l-0"))
    let insertIDs = events.compactMap { $0.properties["$insert_id"]?.string }
    #expect(Set(insertIDs).count == 4_500 && insertIDs.allSatisfy { MixpanelRules.checkInsertID($0) == nil })
    // Each event carries the time it was tracked (in ms), however long the upload took.
    #expect(events.allSatisfy { ((before - 1)...(after + 1)).contains($0.timeMilliseconds ?? 0) })
    #expect(
      events.allSatisfy {
        let bytes = try! JSONEncoder().encode($0).count
        return MixpanelValidator.violations(of: $0, bytes: bytes, nowMilliseconds: after).isEmpty
      })
    #expect(mixpanel.statistics()?.delivered == 4_500)
  }

  @Test func failedRecordsAreDroppedAndTheRestDeliveredWithoutRetry() async throws {
    let server = try await TestHTTPServer.start { _ in
      let answer = MixpanelImportResponse(
        code: 400, numRecordsImported: 2, status: "Bad Request",
        failedRecords: [.init(index: 1, insertID: "x", field: "properties.time", message: "is before 1971")]
      )
      return TestResponse(status: 400, body: String(decoding: try! JSONEncoder().encode(answer), as: UTF8.self))
    }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let mixpanel = try service(server, directory)
    for name in ["a", "b", "c"] { mixpanel.receive(event(name)) }
    await mixpanel.flush()
    #expect(server.requests.count == 1)
    let stats = try #require(mixpanel.statistics())
    #expect(stats.delivered == 2 && stats.dropped[.rejectedByServer] == 1)
  }

  @Test(arguments: [429, 502, 503])
  func rateLimitsAndOutagesAreRetried(status: Int) async throws {
    let calls = LockedCounter()
    let server = try await TestHTTPServer.start { _ in
      calls.next() <= 2 ? TestResponse(status: status, headers: ["Retry-After": "0"]) : TestResponse(status: 200)
    }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let mixpanel = try service(server, directory)
    mixpanel.receive(event("a"))
    await mixpanel.flush()
    #expect(server.requests.count == 3)
    #expect(mixpanel.statistics()?.delivered == 1)
  }

  @Test(arguments: [400, 401])
  func aRefusalIsNeverRetried(status: Int) async throws {
    let server = try await TestHTTPServer.start { _ in TestResponse(status: status, body: #"{"error":"no"}"#) }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let mixpanel = try service(server, directory)
    mixpanel.receive(event("a"))
    await mixpanel.flush()
    #expect(server.requests.count == 1)
    #expect(mixpanel.statistics()?.dropped[.rejectedByServer] == 1)
  }

  @Test func longStringsAndTooManyPropertiesFollowThePolicy() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let long = String(repeating: "s", count: 300)
    let many = EventParameters((0..<300).map { EventParameter(key: "p\($0)", value: .int($0)) })
    let directory = TemporaryDirectory()
    let repair = try service(server, directory)
    repair.receive(event("Long", ["Note": .string(long)]))
    repair.receive(event("Many", many))
    await repair.flush()
    let events = try sentEvents(server)
    #expect(events[0].properties["Note"] == .string(String(repeating: "s", count: 255)))
    #expect(events[1].properties.count < MixpanelLimits.propertyLimit)
    #expect(repair.statistics()?.repaired == ["string_truncated": 1, "properties_left_out": 1])

    let reports = Reports()
    let strictDirectory = TemporaryDirectory()
    let strict = try service(server, strictDirectory, limits: .strict { reports.add($0) })
    strict.receive(event("Long", ["Note": .string(long)]))
    strict.receive(event("Many", many))
    #expect(reports.all.map(\.field) == ["properties.Note", "properties"])
    #expect(strict.statistics()?.dropped[DropReason("mixpanel_invalid")] == 2)
  }

  @Test func listAndObjectPropertiesAreSentAsJSON() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let mixpanel = try service(server, directory, limits: .strict { Issue.record("\($0)") })
    let order = CommerceOrder(
      transactionID: "T-1", currency: "TRY", items: [CommerceItem(id: "SKU-1", price: 9.5, quantity: 2)])
    var parameters = order.parameters
    parameters["tags"] = ["summer", "sale"]
    parameters["seen_at"] = .object(["when": .date(Date(timeIntervalSince1970: 0))])
    mixpanel.receive(event("purchase", parameters))
    await mixpanel.flush()
    let sent = try #require(try sentEvents(server).first)
    #expect(sent.properties["tags"] == .array([.string("summer"), .string("sale")]))
    #expect(
      sent.properties["items"]
        == .array([.object(["item_id": .string("SKU-1"), "price": .double(9.5), "quantity": .int(2)])]))
    #expect(sent.properties["seen_at"] == .object(["when": .string("1970-01-01T00:00:00.000Z")]))
    #expect(sent.properties["value"] == .int(19))
  }

  @Test func structuredPropertiesFollowMixpanelsLimits() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let big = ParameterValue.list((0..<400).map { .string("tag-\($0)-" + String(repeating: "x", count: 20)) })
    let deep: ParameterValue = [["a": ["b": ["c"]]]]
    let directory = TemporaryDirectory()
    let repair = try service(server, directory)
    repair.receive(
      event("Big", ["tags": big, "deep": deep, "kept": ["long": .string(String(repeating: "s", count: 300))]]))
    await repair.flush()
    let sent = try #require(try sentEvents(server).first)
    guard case .array(let kept)? = sent.properties["tags"] else {
      Issue.record("tags is not a list")
      return
    }
    #expect(kept.count > 100 && kept.count < 400)
    #expect(try JSONEncoder().encode(sent.properties["tags"]).count <= MixpanelLimits.maximumStructuredPropertyBytes)
    #expect(sent.properties["deep"] == .null)
    #expect(sent.properties["kept"] == .object(["long": .string(String(repeating: "s", count: 255))]))
    #expect(
      repair.statistics()?.repaired == ["list_truncated": 1, "property_left_out": 1, "string_truncated": 1])

    let reports = Reports()
    let strictDirectory = TemporaryDirectory()
    let strict = try service(server, strictDirectory, limits: .strict { reports.add($0) })
    strict.receive(event("Big", ["tags": big, "deep": deep]))
    #expect(reports.all.map(\.field) == ["properties.tags", "properties.deep"])
  }

  @Test func trackModePutsTheTokenInEachEvent() async throws {
    let server = try await TestHTTPServer.start { _ in TestResponse(status: 200, body: "1") }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let mixpanel = try service(server, directory, mode: .track(token: "tok"))
    mixpanel.receive(event("a"))
    await mixpanel.flush()
    let request = try #require(server.requests.first)
    #expect(request.uri == "/track?verbose=1" && request.headers["authorization"] == nil)
    #expect(try sentEvents(server)[0].properties["token"] == .string("tok"))
    #expect(mixpanel.statistics()?.delivered == 1)
  }
}
