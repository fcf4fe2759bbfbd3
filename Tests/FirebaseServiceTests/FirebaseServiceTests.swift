import CoreTracker
import Delivery
import FirebaseService
import Foundation
import GA4Wire
import ServiceSupport
import TestSupport
import Testing

private let install = "6F9619FF-8B86-D011-B42D-00CF4FC964FF"
private let eventCounter = LockedCounter()

private func event(
  _ name: String, _ parameters: EventParameters = [:], at time: Date = Date(), user: String? = nil,
  properties: EventParameters = [:], session: Int64? = 1_800_000_000, kind: EventKind = .action
) -> TrackedEvent {
  let index = UInt64(eventCounter.next())
  return TrackedEvent(
    id: EventID(high: UInt64(time.timeIntervalSince1970 * 1000) << 16, low: index), name: name, kind: kind,
    parameters: parameters, timestamp: time, anonymousID: install, userID: user,
    session: session.map { TrackingSession(id: $0, startedAt: time, number: 1) }, userProperties: properties
  )
}

private func requests(_ server: TestHTTPServer) throws -> [GA4Request] {
  try server.requests.map { try JSONDecoder().decode(GA4Request.self, from: Data($0.body)) }
}

/// `count` valid items.
private func items(_ count: Int) -> ParameterValue {
  .list((0..<count).map { CommerceItem(id: "SKU-\($0)", price: 1).value })
}

/// One item with `count` custom parameters.
private func customItem(_ count: Int) -> ParameterValue {
  .object(
    EventParameters(
      [EventParameter(key: "item_id", value: "1")] + (0..<count).map { EventParameter(key: "c\($0)", value: .int($0)) })
  )
}

/// The consent the app's banner last recorded, read by the service as it maps each event.
private final class ConsentChoice: @unchecked Sendable {
  // @unchecked: `stored` is only touched under `lock`.
  private let lock = NSLock()
  private var stored: GA4Consent?
  var value: GA4Consent? {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

/// Collects what strict mode reports.
private final class Reports: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: [GA4Violation] = []
  var all: [GA4Violation] { lock.withLock { stored } }
  func add(_ error: any Error) { lock.withLock { stored.append(error as! GA4Violation) } }
}

@Suite("FirebaseService", .serialized)
struct FirebaseServiceTests {
  private func service(
    _ server: TestHTTPServer, _ directory: borrowing TemporaryDirectory, limits: LimitPolicy = .repair,
    endpoint: FirebaseService.Endpoint = .collect
  ) throws -> FirebaseService {
    try FirebaseService(
      firebaseAppID: "1:123:ios:abc", apiSecret: "secret", directory: directory.url, host: server.url,
      endpoint: endpoint, limits: limits, retry: RetryPolicy(initialDelay: 0.01, maximumDelay: 0.05),
      policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 5)
    )
  }

  @Test func requestsFollowTheProtocolAndCarrySessions() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let firebase = try service(server, directory)
    let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3_600).rounded(.down))
    for index in 0..<60 {
      firebase.receive(
        event(
          "select_content", ["item_id": .string("moment-id-\(index)"), "in_stock": .bool(true)],
          at: start.addingTimeInterval(Double(index)), user: "u-1", properties: ["membership": "gold"]))
    }
    await firebase.flush()
    let sent = try requests(server)
    #expect(sent.map(\.events.count) == [25, 25, 10])
    let first = try #require(server.requests.first)
    #expect(first.uri.hasPrefix("/mp/collect?"))
    #expect(first.uri.contains("firebase_app_id=1:123:ios:abc") && first.uri.contains("api_secret=secret"))
    #expect(sent[0].appInstanceID == "6f9619ff8b86d011b42d00cf4fc964ff")
    #expect(sent[0].userID == "u-1" && sent[0].userProperties["membership"]?.value == .string("gold"))
    let events = sent.flatMap(\.events)
    #expect(events[0].params["session_id"] == .int(1_800_000_000))
    #expect(events[0].params["engagement_time_msec"] == .int(1))
    #expect(events[1].params["engagement_time_msec"] == .int(1_000))
    #expect(events[0].params["in_stock"] == .string("true"))
    #expect(events[59].timestampMicros == Int64((start.timeIntervalSince1970 + 59) * 1_000_000))
    for (index, request) in sent.enumerated() {
      let bytes = server.requests[index].body.count
      #expect(
        GA4Validator.validate(request, bodyBytes: bytes, nowMicros: Int64(Date().timeIntervalSince1970 * 1e6)).isValid)
    }
    #expect(firebase.statistics()?.delivered == 60)
  }

  @Test func requestsStayUnder130kB() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let firebase = try service(server, directory)
    // 23 parameters of 100 characters of 4 bytes each (and 2 for the session): about 10 kB per
    // event, so 25 events do not fit in 130 kB and requests are cut by size.
    let parameters = EventParameters(
      (0..<23).map { EventParameter(key: "p\($0)", value: .string(String(repeating: "😀", count: 100))) })
    for _ in 0..<100 { firebase.receive(event("big_event", parameters)) }
    await firebase.flush()
    #expect(server.requests.allSatisfy { $0.body.count < GA4Limits.requestBodyLimit })
    #expect(server.requests.count > 4)
    #expect(try requests(server).flatMap(\.events).count == 100)
  }

  /// Each documented limit, on the client side: strict mode reports the validation endpoint's code,
  /// drop mode counts the event by that code, repair mode sends something the rules accept.
  @Test(
    arguments: [
      ("bad name", "moment-like", EventParameters(), GA4ValidationCode.nameInvalid),
      ("long name", String(repeating: "a", count: 41), [:], .valueOutOfBounds),
      ("reserved prefix", "firebase_like", [:], .nameReserved),
      ("reserved name", "session_start", [:], .nameReserved),
      ("bad parameter name", "like", ["item id": "x"], .nameInvalid),
      ("reserved parameter", "like", ["firebase_conversion": "x"], .nameReserved),
      ("long value", "like", ["item_id": .string(String(repeating: "v", count: 101))], .valueOutOfBounds),
      (
        "too many parameters", "like",
        EventParameters((0..<24).map { EventParameter(key: "p\($0)", value: .int($0)) }), .exceededMaxEntities
      ),
      ("too many items", "add_to_cart", ["currency": "TRY", "items": items(201)], .exceededMaxEntities),
      ("item without id or name", "view_item", ["items": [["price": 1.5]]], .valueRequired),
      ("too many custom item parameters", "view_item", ["items": [customItem(28)]], .exceededMaxEntities),
      (
        "long item value", "view_item", ["items": [["item_id": .string(String(repeating: "v", count: 101))]]],
        .valueOutOfBounds
      ),
      ("bad item parameter name", "view_item", ["items": [["item_id": "1", "in stock": true]]], .nameInvalid),
      ("nested item value", "view_item", ["items": [["item_id": "1", "sizes": ["S", "M"]]]], .valueInvalid),
      ("list outside items", "like", ["tags": ["a", "b"]], .valueInvalid),
      ("items not a list", "view_item", ["items": "SKU-1"], .valueInvalid),
      (
        "negative quantity", "add_to_cart", ["currency": "TRY", "items": [["item_id": "1", "quantity": -2]]],
        .valueInvalid
      ),
      ("value without currency", "purchase", ["transaction_id": "T-1", "value": 10.5], .valueRequired),
    ] as [(String, String, EventParameters, GA4ValidationCode)]
  )
  func everyLimitIsEnforcedBeforeSending(
    label: String, name: String, parameters: EventParameters, code: GA4ValidationCode
  ) async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let reports = Reports()
    let strictDirectory = TemporaryDirectory()
    let strict = try service(server, strictDirectory, limits: .strict { reports.add($0) })
    strict.receive(event(name, parameters))
    #expect(reports.all.map(\.code).contains(code), "\(label): \(reports.all)")
    let dropDirectory = TemporaryDirectory()
    let drop = try service(server, dropDirectory, limits: .drop)
    drop.receive(event(name, parameters))
    #expect(drop.statistics()?.dropped[DropReason("ga4_\(code.rawValue.lowercased())")] == 1, "\(label)")
    let repairDirectory = TemporaryDirectory()
    let repair = try service(server, repairDirectory, limits: .repair)
    repair.receive(event(name, parameters))
    await repair.flush()
    let sent = try requests(server)
    #expect(sent.count == 1, "\(label): only the repaired event is sent")
    let request = try #require(sent.first)
    #expect(
      GA4Validator.validate(request, bodyBytes: 100, nowMicros: Int64(Date().timeIntervalSince1970 * 1e6)).isValid)
    #expect(repair.statistics()?.repaired.values.reduce(0, +) ?? 0 > 0)
  }

  @Test func anOrderIsSentAsGA4sPurchaseWithItsItems() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let firebase = try service(server, directory, limits: .strict { Issue.record("\($0)") })
    let order = CommerceOrder(
      transactionID: "T-1001", currency: "TRY",
      items: [
        CommerceItem(
          id: "SKU-1", name: "Sneaker", brand: "Trendyol", categories: ["Shoes", "Men"], price: 49.5,
          quantity: 2, custom: ["in_stock": true]),
        CommerceItem(name: "Socks", price: 9.99),
      ], tax: 18, shipping: 29.99, coupon: "WELCOME")
    firebase.receive(event("purchase", order.parameters))
    await firebase.flush()
    let sent = try #require(try requests(server).first?.events.first)
    #expect(sent.name == "purchase")
    #expect(sent.params["transaction_id"] == .string("T-1001"))
    #expect(sent.params["currency"] == .string("TRY"))
    #expect(sent.params["value"] == .double(108.99))
    #expect(sent.params["tax"] == .int(18))  // 18.0 on the wire reads back as an integer
    #expect(
      sent.params["items"]
        == .items([
          [
            "item_id": .string("SKU-1"), "item_name": .string("Sneaker"), "item_brand": .string("Trendyol"),
            "item_category": .string("Shoes"), "item_category2": .string("Men"), "price": .double(49.5),
            "quantity": .int(2), "in_stock": .string("true"),
          ],
          ["item_name": .string("Socks"), "price": .double(9.99)],
        ]))
  }

  @Test(arguments: Array(GA4Limits.reservedEventNames).sorted())
  func reservedEventNamesAreNeverSent(name: String) async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let reports = Reports()
    let directory = TemporaryDirectory()
    let firebase = try service(server, directory, limits: .strict { reports.add($0) })
    firebase.receive(event(name))
    await firebase.flush()
    #expect(server.requests.isEmpty)
    #expect(reports.all.map(\.code) == [.nameReserved])
  }

  @Test func userPropertiesAndUserIDFollowTheirLimits() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let reports = Reports()
    let directory = TemporaryDirectory()
    let strict = try service(server, directory, limits: .strict { reports.add($0) })
    strict.receive(
      event(
        "like", user: String(repeating: "u", count: 257),
        properties: [
          "a_very_long_user_property_name": "x", "tier": .string(String(repeating: "t", count: 37)),
          "user_id": "reserved",
        ]))
    #expect(
      Set(reports.all.map(\.fieldPath)) == [
        "user_id", "user_properties.a_very_long_user_property_name", "user_properties.tier", "user_properties.user_id",
      ])
    let repairDirectory = TemporaryDirectory()
    let repair = try service(server, repairDirectory)
    repair.receive(
      event(
        "like", properties: EventParameters((0..<30).map { EventParameter(key: "prop_\($0)", value: .int($0)) })))
    await repair.flush()
    let request = try #require(try requests(server).first)
    #expect(request.userProperties.count == GA4Limits.maximumUserProperties)
    #expect(repair.statistics()?.repaired["user_properties_left_out"] == 1)
  }

  /// The user's advertising consent goes with each request as GA4's `consent` (and the legacy
  /// `non_personalized_ads` when personalisation is denied), read as each event is handed over: a
  /// change starts a new request.
  @Test func advertisingConsentGoesWithEachRequest() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let choice = ConsentChoice()
    let firebase = try FirebaseService(
      firebaseAppID: "1:123:ios:abc", apiSecret: "secret", directory: directory.url, host: server.url,
      consent: { choice.value }, retry: RetryPolicy(initialDelay: 0.01, maximumDelay: 0.05),
      policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 5))
    firebase.receive(event("like"))
    choice.value = GA4Consent(adUserData: .granted, adPersonalization: .denied)
    firebase.receive(event("share"))
    choice.value = GA4Consent(adUserData: .granted, adPersonalization: .granted)
    firebase.receive(event("login"))
    await firebase.flush()
    let sent = try requests(server)
    #expect(sent.map { $0.events.map(\.name) } == [["like"], ["share"], ["login"]])
    #expect(
      sent.map(\.consent) == [
        nil, GA4Consent(adUserData: .granted, adPersonalization: .denied),
        GA4Consent(adUserData: .granted, adPersonalization: .granted),
      ])
    #expect(sent.map(\.nonPersonalizedAds) == [nil, true, nil])
    for (index, request) in sent.enumerated() {
      let bytes = server.requests[index].body.count
      #expect(
        GA4Validator.validate(request, bodyBytes: bytes, nowMicros: Int64(Date().timeIntervalSince1970 * 1e6)).isValid)
    }
  }

  @Test func uniformScreenViewsBecomeScreenViewAndFeaturePayloadsStayAsTheyAre() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let firebase = try service(server, directory)
    firebase.receive(event("checkout_viewed", ["item_count": .int(2)], kind: .screenView))
    firebase.receive(event("seller_profile", ["screen_class": "SellerProfileView"], kind: .screenView))
    var own = event("view_item", ["item_id": "P1"], kind: .screenView)
    own.isServicePayload = true
    firebase.receive(own)
    await firebase.flush()
    let events = try requests(server).flatMap(\.events)
    #expect(events.map(\.name) == ["screen_view", "screen_view", "view_item"])
    #expect(events[0].params["screen_name"] == .string("checkout_viewed"))
    #expect(events[0].params["screen_class"] == .string("checkout_viewed") && events[0].params["item_count"] == .int(2))
    #expect(events[1].params["screen_class"] == .string("SellerProfileView"))
    #expect(events[2].params["screen_name"] == nil)
    #expect(firebase.statistics()?.repaired.isEmpty == true)
  }

  @Test func eventsOlderThan72HoursAreExpiredNotSent() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let firebase = try service(server, directory)
    firebase.receive(event("old", at: Date().addingTimeInterval(-73 * 3_600)))
    firebase.receive(event("recent", at: Date().addingTimeInterval(-71 * 3_600)))
    await firebase.flush()
    #expect(try requests(server).flatMap(\.events).map(\.name) == ["recent"])
    #expect(firebase.statistics()?.dropped[.expired] == 1)
  }

  @Test func theValidationEndpointsMessagesBecomeTypedErrors() async throws {
    let server = try await TestHTTPServer.start { _ in
      let answer = GA4ValidationResponse([
        GA4Violation(fieldPath: "events[1].params.item_id", code: .valueInvalid, message: "not a known item")
      ])
      return TestResponse(status: 200, body: String(decoding: try! JSONEncoder().encode(answer), as: UTF8.self))
    }
    defer { Task { await server.stop() } }
    let reports = Reports()
    let directory = TemporaryDirectory()
    let firebase = try service(server, directory, limits: .strict { reports.add($0) }, endpoint: .validation)
    firebase.receive(event("a"))
    firebase.receive(event("b"))
    firebase.receive(event("c"))
    await firebase.flush()
    #expect(try #require(server.requests.first).uri.hasPrefix("/debug/mp/collect?"))
    #expect(
      reports.all == [
        GA4Violation(fieldPath: "events[1].params.item_id", code: .valueInvalid, message: "not a known item")
      ])
    #expect(firebase.statistics()?.delivered == 2)
    #expect(firebase.statistics()?.dropped[.rejectedByServer] == 1)
  }
}
