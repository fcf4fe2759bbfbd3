import CollectorService
import CollectorWire
import CoreTracker
import CoreTrackerTesting
import DLTracker
import Delivery
import Foundation
import ServiceSupport
import TYTracker
import TestSupport
import Testing

func batches(_ server: TestHTTPServer) throws -> [CollectorBatch] {
  try server.requests.filter { $0.uri.hasPrefix("/v1/batch") }.map {
    try JSONDecoder().decode(CollectorBatch.self, from: Data($0.body))
  }
}

let context = TrackingContext(
  appName: "Trendyol", appVersion: "5.12.0", appBuild: "5120", osName: "iOS", osVersion: "17.4.1", platform: "iOS",
  deviceModel: "iPhone15,2", locale: "tr_TR", timeZone: "Europe/Istanbul"
)

@Suite("CollectorService", .serialized)
struct CollectorServiceTests {
  private func service(_ server: TestHTTPServer, _ directory: borrowing TemporaryDirectory) throws -> CollectorService {
    try CollectorService(
      endpoint: server.url, writeKey: "wk_test", directory: directory.url,
      retry: RetryPolicy(initialDelay: 0.01, maximumDelay: 0.05),
      policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 5)
    )
  }

  @Test func eventsArriveAsTheNativeBatchWithContextAndAuthentication() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let collector = try service(server, directory)
    let clock = Date(timeIntervalSince1970: 1_800_000_000.5)
    let tracker = Tracker(
      services: [collector],
      configuration: TrackerConfiguration(context: context, anonymousID: "anon-7", clock: { clock })
    )
    tracker.identify(userID: "u-1")
    tracker.track(
      GenericEvent(
        "add_to_cart", kind: .action,
        parameters: ["product_id": "P1", "quantity": 2, "price": 19.5, "gift": false, "at": .date(clock)]
      )
    )
    await tracker.flush()

    let request = try #require(server.requests.first)
    #expect(request.uri == "/v1/batch")
    #expect(request.headers["authorization"] == "Bearer wk_test")
    #expect(request.headers["content-encoding"] == "gzip")
    #expect(request.headers["content-type"] == "application/json")
    let batch = try #require(try batches(server).first)
    #expect(batch.context[.appVersion] == "5.12.0" && batch.context[.timeZone] == "Europe/Istanbul")
    #expect(batch.context[.libraryName] == "CoreTracker")
    #expect(abs(batch.sentAt - Int64(Date().timeIntervalSince1970 * 1000)) < 60_000)
    #expect(batch.events.map(\.name) == ["session_start", "add_to_cart"])
    let event = batch.events[1]
    #expect(event.kind == "action")
    #expect(event.timestamp == 1_800_000_000_500)
    #expect(event.utcOffsetMinutes == 180)
    #expect(event.anonymousId == "anon-7" && event.userId == "u-1")
    #expect(event.sessionId == 1_800_000_000)
    // Read by the collector's own parser: the parameters arrive in the order they were tracked.
    let body = try #require(server.requests.first { $0.uri.hasPrefix("/v1/batch") }?.body)
    #expect(
      try BatchDecoder.decode(Array(body)).events[1].parameters == [
        "product_id": .string("P1"), "quantity": .int(2), "price": .double(19.5), "gift": .bool(false),
        "at": .string("2027-01-15T08:00:00.500Z"),
      ]
    )
    #expect(EventID(event.id) != nil)
    #expect(collector.statistics()?.delivered == 2)
    // Every field of the tracker's context reaches the wire under its own name, and nothing else.
    let tracked = try JSONDecoder().decode([String: String].self, from: JSONEncoder().encode(context))
    let sent = try JSONDecoder().decode([String: String].self, from: JSONEncoder().encode(batch.context))
    #expect(sent == tracked)
  }

  /// The tracker's context and the wire's declare the same fields, and each arrives in its own:
  /// decoding a `TrackingContext` from every ``ContextField`` fails when the tracker has a field the
  /// wire lacks (the other way round, the service's mapping does not compile).
  @Test func everyFieldOfTheTrackersContextArrivesInItsOwnWireField() async throws {
    let names = Dictionary(uniqueKeysWithValues: ContextField.allCases.map { ($0.rawValue, "<\($0.rawValue)>") })
    let clientContext = try JSONDecoder().decode(TrackingContext.self, from: JSONEncoder().encode(names))
    let clientNames = try JSONDecoder().decode([String: String].self, from: JSONEncoder().encode(clientContext))
    #expect(clientNames == names)
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let tracker = Tracker(
      services: [try service(server, directory)],
      configuration: TrackerConfiguration(context: clientContext, anonymousID: "anon-8")
    )
    tracker.track(GenericEvent("opened"))
    await tracker.flush()
    let batch = try #require(try batches(server).first)
    #expect(batch.context == EventContext { "<\($0.rawValue)>" })
  }

  @Test func countersAreSummedPerNameSinceTheLastSend() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let collector = try service(server, directory)
    let tracker = Tracker(services: [collector], configuration: TrackerConfiguration(context: context))
    tracker.count("Foregrounded app")
    tracker.count("Foregrounded app")
    tracker.count("Opened settings", by: 3)
    tracker.count("Foregrounded app")
    await tracker.flush()
    tracker.count("Foregrounded app")
    await tracker.flush()
    let sent = try batches(server)
    #expect(
      sent.map { $0.counters.map { "\($0.name)=\($0.count)" } } == [
        ["Foregrounded app=3", "Opened settings=3"], ["Foregrounded app=1"],
      ])
    #expect(sent.allSatisfy { $0.events.isEmpty })
    #expect(tracker.stats.counted == 5)
  }

  @Test func thePartialSuccessAnswerDropsOnlyTheRejectedEvents() async throws {
    let server = try await TestHTTPServer.start { _ in
      let answer = BatchResponse(
        accepted: 2, rejected: [.init(index: 1, id: nil, field: "events[1].name", reason: "name too long")]
      )
      return TestResponse(status: 200, body: String(decoding: try! JSONEncoder().encode(answer), as: UTF8.self))
    }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let collector = try service(server, directory)
    let tracker = Tracker(services: [collector], configuration: TrackerConfiguration(emitsSessionEvents: false))
    for name in ["a", "b", "c"] { tracker.track(GenericEvent(name)) }
    await tracker.flush()
    let stats = try #require(collector.statistics())
    #expect(stats.delivered == 2 && stats.dropped[.rejectedByServer] == 1 && stats.queued == 0)
    // The same counts through the tracker's stats API, beside what the tracker routed.
    let throughTracker = try #require(tracker.stats.services[.collector])
    #expect(throughTracker.received == 3 && throughTracker.delivered == 2)
    #expect(throughTracker.dropped[.rejectedByServer] == 1 && throughTracker.inFlight == 0)
  }

  @Test func eventsOverThirtyTwoKilobytesAreDroppedAndCounted() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let collector = try service(server, directory)
    let tracker = Tracker(services: [collector], configuration: TrackerConfiguration(emitsSessionEvents: false))
    tracker.track(GenericEvent("huge", parameters: ["blob": .string(String(repeating: "x", count: 33 * 1024))]))
    tracker.track(GenericEvent("fine", parameters: ["blob": .string(String(repeating: "x", count: 30 * 1024))]))
    await tracker.flush()
    #expect(try batches(server).flatMap(\.events).map(\.name) == ["fine"])
    #expect(collector.statistics()?.dropped[.eventTooLarge] == 1)
  }

  @Test func batchesNeverMixContextsAndKeepTheLimits() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let collector = try service(server, directory)
    var upgraded = context
    upgraded.appVersion = "5.13.0"
    for (version, count) in [(context, 3000), (upgraded, 10)] {
      let tracker = Tracker(
        services: [collector], configuration: TrackerConfiguration(context: version, emitsSessionEvents: false))
      for index in 0..<count { tracker.track(GenericEvent("e", parameters: ["i": .int(index)])) }
      await tracker.flush()
    }
    let sent = try batches(server)
    #expect(sent.allSatisfy { $0.events.count <= CollectorLimits.maximumEventsPerBatch })
    #expect(server.requests.allSatisfy { $0.body.count <= CollectorLimits.maximumRequestBytes })
    #expect(sent.filter { $0.context[.appVersion] == "5.12.0" }.flatMap(\.events).count == 3000)
    #expect(sent.filter { $0.context[.appVersion] == "5.13.0" }.flatMap(\.events).count == 10)
  }

  @Test func bothProductsSendTheirOwnDefaultsThroughTheSameServiceType() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let trendyolDirectory = TemporaryDirectory()
    let dolapDirectory = TemporaryDirectory()
    let trendyol = TYTracker(
      log: NoOpService(id: TYService.log), collector: try service(server, trendyolDirectory),
      configuration: TrackerConfiguration(emitsSessionEvents: false)
    )
    let dolap = DLTracker(
      log: NoOpService(id: DLService.log), collector: try service(server, dolapDirectory),
      configuration: TrackerConfiguration(emitsSessionEvents: false)
    )
    trendyol.track(GenericEvent("ty_event"))
    dolap.track(GenericEvent("dl_event"))
    await trendyol.flush()
    await dolap.flush()
    let events = try batches(server).flatMap(\.events)
    #expect(events.first { $0.name == "ty_event" }?.parameters["product"] == .string("trendyol"))
    #expect(events.first { $0.name == "dl_event" }?.parameters["product"] == .string("dolap_lite"))
    #expect(events.first { $0.name == "dl_event" }?.parameters["host_app"] == .string("trendyol"))
  }

  @Test func goingToTheBackgroundSendsWithoutBeingAwaited() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let collector = try CollectorService(
      endpoint: server.url, writeKey: "k", directory: directory.url, policy: FlushPolicy(count: nil, interval: nil)
    )
    // Through the product tracker's wrapper, as an app has it.
    let tracker = TYTracker(
      log: NoOpService(id: TYService.log), collector: collector,
      configuration: TrackerConfiguration(emitsSessionEvents: false)
    )
    for index in 0..<3 { tracker.track(GenericEvent("e\(index)")) }
    tracker.sendSoon()
    #expect(await waitUntil { (try? batches(server).flatMap(\.events).count) == 3 })
  }

  /// A typical event: five parameters, a signed-in user, a session, the install's random id.
  static func typicalEvent(_ index: Int) -> GenericEvent {
    GenericEvent(
      "product_viewed",
      parameters: [
        "product_id": .string("p-\(100_000 + index % 977)"), "price": .double(Double(index % 500) + 0.99),
        "position": .int(index % 40), "in_stock": .bool(index % 3 != 0), "list": .string("search_results"),
      ])
  }

  @Test func recordsReferenceTheirContextAndTheDefaultsHoldAHundredThousandTypicalEvents() async throws {
    let directory = TemporaryDirectory()
    // Nothing answers: every record stays in the outbox.
    let collector = try CollectorService(
      endpoint: URL(string: "http://127.0.0.1:9")!, writeKey: "k", directory: directory.url,
      policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 0)
    )
    let tracker = Tracker(
      services: [collector],
      configuration: TrackerConfiguration(
        context: context, anonymousID: AnonymousID.random(), userID: "user-48213", emitsSessionEvents: false)
    )
    let count = 1_000
    for index in 0..<count { tracker.track(Self.typicalEvent(index)) }
    await tracker.flush()
    let outbox = collector.queue.outbox
    let stats = outbox.stats
    #expect(stats.records == count)
    let records = outbox.read(maximumRecords: count)
    let contextJSON = Array(#""appName":"Trendyol""#.utf8)
    let repeatsContext = records.contains { record in
      record.payload.indices.dropLast(contextJSON.count - 1).contains {
        record.payload[$0..<$0 + contextJSON.count].elementsEqual(contextJSON)
      }
    }
    #expect(!repeatsContext, "a record repeats the context")
    #expect(Set(records.map { RecordFraming.reference($0.payload) }).count == 1)
    let perRecord = stats.bytes / count
    let defaults = OutboxConfiguration()
    // One segment is the partly filled one being written.
    #expect(100_000 * perRecord <= defaults.maximumBytes - defaults.segmentBytes, "\(perRecord) bytes per record")
    #expect(defaults.maximumRecords >= 100_000)
    #expect(TrackerConfiguration().queueCapacity >= 50_000)
  }

  @Test func eventsWhoseEventContextIsGoneAreStillSentWithAnEmptyOne() async throws {
    let directory = TemporaryDirectory()
    do {
      let offline = try CollectorService(
        endpoint: URL(string: "http://127.0.0.1:9")!, writeKey: "k", directory: directory.url,
        policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 0)
      )
      let tracker = Tracker(services: [offline], configuration: TrackerConfiguration(emitsSessionEvents: false))
      for index in 0..<3 { tracker.track(GenericEvent("e\(index)")) }
      await tracker.flush()
    }
    try FileManager.default.removeItem(at: directory.url.appendingPathComponent("contexts"))
    #expect(await waitUntil(30) { outboxRunsAreUnlocked(in: directory.url) })
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let restarted = try service(server, directory)
    await restarted.flush()
    let sent = try batches(server)
    #expect(sent.flatMap(\.events).map(\.name) == ["e0", "e1", "e2"])
    #expect(sent.allSatisfy { $0.context[.appName].isEmpty && $0.context[.libraryName].isEmpty })
    #expect(restarted.statistics()?.delivered == 3)
  }

  @Test func whatWasNotSentSurvivesARestart() async throws {
    let probe = try await TestHTTPServer.start()
    let port = probe.port
    await probe.stop()
    let directory = TemporaryDirectory()
    let endpoint = URL(string: "http://127.0.0.1:\(port)")!
    do {
      let collector = try CollectorService(
        endpoint: endpoint, writeKey: "k", directory: directory.url,
        policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 0.2)
      )
      let tracker = Tracker(services: [collector], configuration: TrackerConfiguration(emitsSessionEvents: false))
      for index in 0..<50 { tracker.track(GenericEvent("e\(index)")) }
      await tracker.flush()
      #expect(collector.statistics()?.queued == 50)
    }
    #expect(await waitUntil(30) { outboxRunsAreUnlocked(in: directory.url) })
    let server = try await TestHTTPServer.start(port: port)
    defer { Task { await server.stop() } }
    let restarted = try CollectorService(
      endpoint: endpoint, writeKey: "k", directory: directory.url,
      policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 5)
    )
    await restarted.flush()
    #expect(try batches(server).flatMap(\.events).map(\.name) == (0..<50).map { "e\($0)" })
    // The context, stored once beside the outbox, travels with the events after the restart.
    #expect(
      try batches(server).allSatisfy { $0.context[.libraryName] == "CoreTracker" && !$0.context[.osName].isEmpty })
  }
}

/// The bytes of outbox segments under `directory`, at any depth (each process run has its own
/// outbox under `runs/`).
func diskUse(_ directory: URL) throws -> Int {
  let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])
  var total = 0
  while let file = files?.nextObject() as? URL {
    guard file.lastPathComponent.hasPrefix("segment-") else { continue }
    // (A segment delivered meanwhile is deleted between listing and sizing: it no longer counts.)
    total += (try? file.resourceValues(forKeys: [.fileSizeKey]))?.fileSize ?? 0
  }
  return total
}
