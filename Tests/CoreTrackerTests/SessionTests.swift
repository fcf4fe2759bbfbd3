import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

@Suite("Sessions")
struct SessionTests {
  @Test func inactivityOverTheTimeoutStartsANewSession() async throws {
    let harness = Harness(sessionEvents: true)
    harness.tracker.track(GenericEvent("a"))
    harness.clock.advance(by: 29 * 60)
    harness.tracker.track(GenericEvent("b"))
    harness.clock.advance(by: 30 * 60 + 1)
    harness.tracker.track(GenericEvent("c"))
    await harness.flush()

    let events = harness.collector.events
    #expect(events.map(\.name) == ["session_start", "a", "b", "session_end", "session_start", "c"])
    let first = try #require(events[1].session)
    let second = try #require(events[5].session)
    #expect(events[2].session == first)
    #expect(first.number == 1 && second.number == 2)
    #expect(first.id != second.id)
    #expect(second.id == Int64(harness.clock.date.timeIntervalSince1970))
    // The end is stamped with the last activity and carries the duration.
    let end = events[3]
    #expect(end.session == first)
    #expect(end.timestamp == events[2].timestamp)
    #expect(end.parameters["duration_ms"] == .int(29 * 60 * 1000))
    #expect(end.parameters["session_number"] == 1)
  }

  @Test func aCustomTimeoutIsHonoured() async {
    let harness = Harness { $0.sessionTimeout = 10 }
    harness.tracker.track(GenericEvent("a"))
    harness.clock.advance(by: 11)
    harness.tracker.track(GenericEvent("b"))
    await harness.flush()
    #expect(harness.collector.events.map { $0.session?.number } == [1, 2])
  }

  @Test func endSessionClosesTheCurrentSessionOnce() async {
    let harness = Harness(sessionEvents: true)
    harness.tracker.track(GenericEvent("a"))
    harness.tracker.endSession()
    harness.tracker.endSession()
    harness.tracker.track(GenericEvent("b"))
    await harness.flush()
    #expect(harness.collector.names == ["session_start", "a", "session_end", "session_start", "b"])
    #expect(harness.tracker.stats.generated == 3)
  }

  @Test func sessionEventsCanBeTurnedOff() async {
    let harness = Harness(sessionEvents: false)
    harness.tracker.track(GenericEvent("a"))
    harness.clock.advance(by: 3600)
    harness.tracker.track(GenericEvent("b"))
    await harness.flush()
    #expect(harness.collector.names == ["a", "b"])
    #expect(harness.collector.events.map { $0.session?.number } == [1, 2])
  }
}

@Suite("Queue and concurrency")
struct ConcurrencyTests {
  /// Blocks in `receive` until released, so tests can fill the queue deterministically.
  final class GateService: TrackerService {
    let id = ServiceID("gate")
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    private let count = Locked(0)
    func receive(_ event: TrackedEvent) {
      let first = count.withLock { value -> Bool in
        value += 1
        return value == 1
      }
      if first {
        entered.signal()
        release.wait()
      }
    }
    var received: Int { count.snapshot }
  }

  @Test func aFullQueueDropsAndCountsExactly() async {
    let gate = GateService()
    let tracker = Tracker(
      services: [gate],
      configuration: TrackerConfiguration(emitsSessionEvents: false, queueCapacity: 100)
    )
    tracker.track(GenericEvent("first"))
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        gate.entered.wait()
        continuation.resume()
      }
    }
    for index in 0..<105 { tracker.track(GenericEvent("e\(index)")) }
    #expect(tracker.stats.dropped(.queueFull) == 5)
    #expect(tracker.stats.queued == 101)
    gate.release.signal()
    await tracker.flush()
    #expect(gate.received == 101)
    let stats = tracker.stats
    #expect(stats.tracked == 106 && stats.routed == 101 && stats.queued == 0)
  }

  @Test func afterShutdownEventsAreDroppedWithAReason() async {
    let service = RecordingService()
    let tracker = Tracker(services: [service], configuration: TrackerConfiguration(emitsSessionEvents: false))
    tracker.track(GenericEvent("before"))
    await tracker.shutdown()
    tracker.track(GenericEvent("after"))
    await tracker.flush()  // returns at once after shutdown
    #expect(service.names == ["before"])
    #expect(tracker.stats.dropped(.shutdown) == 1)
  }

  @Test func flushWaitsForEveryService() async {
    let first = RecordingService(id: ServiceID("one"))
    let second = RecordingService(id: ServiceID("two"))
    let tracker = Tracker(services: [first, second])
    await tracker.flush()
    #expect(first.flushCount == 1 && second.flushCount == 1)
  }

  @Test func manyThreadsAndADetachedTaskLoseNothing() async {
    let service = RecordingService()
    let tracker = Tracker(
      services: [service],
      configuration: TrackerConfiguration(emitsSessionEvents: false, queueCapacity: 1_000_000)
    )
    let threads = 8
    let perThread = 5_000
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().async {
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
          for index in 0..<perThread {
            tracker.track(GenericEvent("thread", parameters: ["thread": .int(thread), "index": .int(index)]))
            if index % 1000 == 0 { tracker.setDefaultParameter(.int(index), forKey: "checkpoint") }
          }
        }
        continuation.resume()
      }
    }
    await Task.detached {
      for index in 0..<perThread { tracker.track(GenericEvent("detached", parameters: ["index": .int(index)])) }
    }.value
    await tracker.flush()

    let events = service.events
    #expect(events.count == (threads + 1) * perThread)
    #expect(Set(events.map(\.id)).count == events.count)
    #expect(tracker.stats.totalDropped == 0)
    // Per producer, order is preserved.
    for thread in 0..<threads {
      let indices = events.filter { $0.parameters["thread"] == .int(thread) }.compactMap { $0.parameters["index"] }
      #expect(indices == (0..<perThread).map { .int($0) })
    }
  }

  @Test func trackingNeverWaitsOnASlowService() async {
    let gate = GateService()
    let tracker = Tracker(services: [gate], configuration: TrackerConfiguration(emitsSessionEvents: false))
    tracker.track(GenericEvent("blocks the worker"))
    gate.entered.wait()
    // The worker is stuck in the service; track still returns.
    for _ in 0..<1000 { tracker.track(GenericEvent("more")) }
    #expect(tracker.stats.queued == 1000 + 1)
    gate.release.signal()
    await tracker.flush()
    #expect(gate.received == 1001)
  }
}
