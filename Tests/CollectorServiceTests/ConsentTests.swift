import CollectorService
import CollectorWire
import CoreTracker
import CoreTrackerTesting
import Delivery
import Foundation
import TestSupport
import Testing

@Suite("Consent that sticks", .serialized)
struct ConsentTests {
  private func collector(_ server: TestHTTPServer, _ directory: borrowing TemporaryDirectory) throws -> CollectorService
  {
    try CollectorService(
      endpoint: server.url, writeKey: "wk_test", directory: directory.url.appendingPathComponent("outbox"),
      retry: RetryPolicy(initialDelay: 0.01, maximumDelay: 0.05),
      policy: FlushPolicy(count: nil, interval: nil, flushTimeout: 0.2))
  }

  private func configuration(_ directory: borrowing TemporaryDirectory) -> TrackerConfiguration {
    TrackerConfiguration(
      emitsSessionEvents: false, journal: TrackerJournal(directory: directory.url.appendingPathComponent("journal")))
  }

  /// Events waiting in the outbox (the collector down) when the user withdraws consent for the
  /// service are dropped, counted as `consent`, and never sent, even once the collector is back.
  @Test func withdrawingConsentDropsWhatTheServiceHolds() async throws {
    let down = LockedFlag(true)
    let server = try await TestHTTPServer.start { _ in down.value ? TestResponse(status: 503) : TestResponse() }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    let service = try collector(server, directory)
    let tracker = Tracker(services: [service], configuration: configuration(directory))
    for index in 0..<5 { tracker.track(GenericEvent("before", parameters: ["i": .int(index)])) }
    await tracker.flush()
    #expect(service.statistics()?.queued == 5)

    tracker.setConsent(Consent(deniedServices: [.collector]))
    tracker.track(GenericEvent("after"))
    let attempts = server.requests.count  // refused with 503 while down
    down.value = false
    await tracker.flush()
    let stats = try #require(service.statistics())
    #expect(stats.queued == 0 && stats.delivered == 0)
    #expect(stats.dropped[.consent] == 5)
    #expect(tracker.stats.services[.collector]?.dropped[.consent] == 6)
    #expect(server.requests.count == attempts, "nothing sent once the collector is back")
    #expect(tracker.recordedDrops == [DropReport.Entry(service: .collector, reason: .consent, count: 6)])
  }

  /// The consent last set holds across a restart, whatever the configuration says.
  @Test func consentHoldsAcrossARestart() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    do {
      let tracker = Tracker(services: [try collector(server, directory)], configuration: configuration(directory))
      tracker.setConsent(.optedOut)
      await tracker.shutdown()
    }
    let tracker = Tracker(services: [try collector(server, directory)], configuration: configuration(directory))
    tracker.track(GenericEvent("after_restart"))
    await tracker.flush()
    #expect(tracker.stats.dropped(.consent) == 1)
    #expect(try batches(server).flatMap(\.events).isEmpty)
  }

  /// Opting back in does not release what was tracked while opted out.
  @Test func aGrantAppliesFromItsCommandOn() async throws {
    let directory = TemporaryDirectory()
    let gate = GateRecorder()
    let tracker = Tracker(services: [gate], configuration: configuration(directory))
    tracker.track(GenericEvent("a"))
    gate.entered.wait()
    tracker.setConsent(.optedOut)
    tracker.track(GenericEvent("b"))
    tracker.setConsent(.granted)
    tracker.track(GenericEvent("c"))
    gate.release.signal()
    await tracker.flush()
    #expect(gate.names == ["a", "c"])
  }
}

/// Records events; the first `receive` waits until released (the worker is held there).
final class GateRecorder: TrackerService, @unchecked Sendable {
  // @unchecked: the semaphores are thread-safe; `events` is behind its lock.
  let id = ServiceID.collector
  let entered = DispatchSemaphore(value: 0)
  let release = DispatchSemaphore(value: 0)
  private let recorded = Locked<[String]>([])

  func receive(_ event: TrackedEvent) {
    let first = recorded.withLock { names in
      names.append(event.name)
      return names.count == 1
    }
    if first {
      entered.signal()
      release.wait()
    }
  }

  var names: [String] { recorded.snapshot }
}
