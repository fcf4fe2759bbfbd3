import CollectorService
import CollectorWire
import CoreTracker
import Delivery
import Foundation
import TestSupport
import Testing

/// Collects a tracker's delivery reports (and its warnings) for a test to look at.
final class ReportLog: Sendable {
  private let reports = Locked<[DeliveryReport]>([])
  private let warnings = Locked<[String]>([])

  func add(_ report: DeliveryReport) { reports.withLock { $0.append(report) } }
  func warn(_ text: String) { warnings.withLock { $0.append(text) } }
  var all: [DeliveryReport] { reports.snapshot }
  var warned: [String] { warnings.snapshot }

  /// The reports of `service` whose outcome `matches`.
  func of(_ service: ServiceID?, _ matches: (DeliveryReport.Outcome) -> Bool) -> [DeliveryReport] {
    all.filter { $0.service == service && matches($0.outcome) }
  }
}

@Suite("Delivery reports", .serialized)
struct DeliveryReportTests {
  private func tracker(
    _ server: TestHTTPServer, _ directory: borrowing TemporaryDirectory, log: ReportLog,
    sampling: SamplingStage = SamplingStage()
  ) throws -> (Tracker, CollectorService) {
    let collector = try CollectorService(
      endpoint: server.url, writeKey: "wk_test", directory: directory.url,
      retry: RetryPolicy(initialDelay: 0.01, maximumDelay: 0.05), policy: FlushPolicy(count: nil, interval: nil))
    let tracker = Tracker(
      services: [collector],
      configuration: TrackerConfiguration(
        emitsSessionEvents: false, sampling: sampling, warning: { log.warn($0) }))
    return (tracker, collector)
  }

  @Test func aGoodBatchIsReportedDeliveredWithItsEventIDs() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let log = ReportLog()
    let (tracker, _) = try tracker(server, directory, log: log)
    let stream = tracker.deliveryReports(includingEventIDs: true)
    for name in ["a", "b", "c"] { tracker.track(GenericEvent(name)) }
    await tracker.flush()

    var iterator = stream.makeAsyncIterator()
    let report = try #require(await iterator.next())
    #expect(report.service == .collector && report.outcome == .delivered && report.count == 3)
    let sent = try batches(server).flatMap(\.events).map(\.id)
    #expect(report.eventIDs == sent)
    #expect(report.description == "collector: delivered 3")
    #expect(log.warned.isEmpty)
  }

  /// 401 and 403: refused, counted as dropped, never retried, and said out loud once per service.
  @Test(arguments: [401, 403])
  func aWrongKeyIsRefusedNotRetriedAndSaidOnce(status: Int) async throws {
    let server = try await TestHTTPServer.start { _ in TestResponse(status: status) }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let log = ReportLog()
    let (tracker, collector) = try tracker(server, directory, log: log)
    tracker.onDelivery { log.add($0) }
    tracker.track(GenericEvent("a"))
    await tracker.flush()
    tracker.track(GenericEvent("b"))
    await tracker.flush()

    let refused = log.of(.collector) { if case .refused(status, _) = $0 { return true } else { return false } }
    #expect(refused.map(\.count) == [1, 1])
    #expect(refused.first?.description.contains("wrong or revoked write key") == true)
    #expect(server.requests.count == 2, "each batch sent once, never retried")
    #expect(log.warned.count == 1)
    #expect(log.warned.first?.contains("HTTP \(status)") == true)
    #expect(collector.statistics()?.dropped[.rejectedByServer] == 2)
  }

  @Test func aRefusedEventIsReportedWithTheServersReasonBesideTheDeliveredOnes() async throws {
    let server = try await TestHTTPServer.start { _ in
      let answer = BatchResponse(
        accepted: 1, rejected: [.init(index: 1, id: nil, field: "events[1].parameters.currency", reason: "bad")])
      return TestResponse(status: 200, body: String(decoding: BatchWriter.response(answer), as: UTF8.self))
    }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let log = ReportLog()
    let (tracker, _) = try tracker(server, directory, log: log)
    tracker.onDelivery(includingEventIDs: true) { log.add($0) }
    tracker.track(GenericEvent("a"))
    tracker.track(GenericEvent("b"))
    await tracker.flush()

    let delivered = log.of(.collector) { $0 == .delivered }
    let refused = log.of(.collector) { if case .refused = $0 { return true } else { return false } }
    #expect(delivered.map(\.count) == [1])
    #expect(delivered.first?.eventIDs.count == 1)
    #expect(refused.map(\.outcome) == [.refused(status: 200, reasons: ["events[1].parameters.currency: bad"])])
  }

  @Test func dropsBeforeAnyServiceAreReportedAsTheTrackers() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let log = ReportLog()
    let (tracker, _) = try tracker(server, directory, log: log, sampling: SamplingStage(rates: ["noise": 0]))
    let subscription = tracker.onDelivery { log.add($0) }
    for _ in 0..<4 { tracker.track(GenericEvent("noise")) }
    await tracker.flush()
    let dropped = log.of(nil) { $0 == .dropped(.sampledOut) }
    #expect(dropped.reduce(0) { $0 + $1.count } == 4)
    subscription.cancel()
    tracker.track(GenericEvent("noise"))
    await tracker.flush()
    #expect(log.of(nil) { $0 == .dropped(.sampledOut) }.reduce(0) { $0 + $1.count } == 4, "cancelled")
  }

  /// With a journal, drops are kept on disk and sent with the next batch as `diagnostics`, once
  /// per report id.
  @Test func dropsTravelToTheCollectorInTheNextBatch() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let collector = try CollectorService(
      endpoint: server.url, writeKey: "wk_test", directory: directory.url.appendingPathComponent("outbox"),
      policy: FlushPolicy(count: nil, interval: nil))
    let tracker = Tracker(
      services: [collector],
      configuration: TrackerConfiguration(
        anonymousID: "anon-9", emitsSessionEvents: false, sampling: SamplingStage(rates: ["noise": 0]),
        journal: TrackerJournal(directory: directory.url.appendingPathComponent("journal"))))
    for _ in 0..<3 { tracker.track(GenericEvent("noise")) }
    tracker.track(GenericEvent("kept"))
    await tracker.flush()

    let reports = try batches(server).flatMap { $0.diagnostics ?? [] }
    #expect(reports.count == 1)
    #expect(reports.first?.anonymousId == "anon-9")
    #expect(reports.first?.dropped == [CollectorDropReport.Dropped(service: nil, reason: "sampled_out", count: 3)])
    #expect(try batches(server).flatMap(\.events).map(\.name) == ["kept"])
    #expect(collector.statistics()?.delivered == 1, "a drop report is not an event")
    #expect(tracker.recordedDrops == [DropReport.Entry(service: nil, reason: .sampledOut, count: 3)])
  }

  /// A report handler may read the counts: the outbox tells of its drops after releasing its lock.
  @Test(.timeLimit(.minutes(1)))
  func aHandlerMayReadTheCountsWhileTheOutboxDrops() async throws {
    let server = try await TestHTTPServer.start { _ in TestResponse(status: 503) }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let collector = try CollectorService(
      endpoint: server.url, writeKey: "wk_test", directory: directory.url,
      outbox: OutboxConfiguration(maximumRecords: 5), policy: FlushPolicy(count: nil, interval: nil))
    let tracker = Tracker(services: [collector], configuration: TrackerConfiguration(emitsSessionEvents: false))
    let seen = Locked(0)
    tracker.onDelivery { report in
      if report.outcome == .dropped(.outboxFull) { seen.withLock { $0 += collector.statistics()?.queued ?? 0 } }
    }
    for index in 0..<20 { tracker.track(GenericEvent("e", parameters: ["i": .int(index)])) }
    await tracker.handedOver()
    #expect(collector.statistics()?.dropped[.outboxFull] == 15)
    #expect(seen.snapshot > 0)
  }
}
