public import Foundation

/// The time a ``DeliveryQueue`` runs on: the current time, and waiting (back-off, the send
/// interval, the outbox's sync interval). Production uses ``SystemDeliveryClock``; tests inject a
/// ``ManualDeliveryClock`` and move time themselves instead of sleeping.
public protocol DeliveryClock: Sendable {
  /// The current time.
  func now() -> Date
  /// Returns after `seconds` of this clock's time; throws `CancellationError` when the task is
  /// cancelled first.
  func sleep(for seconds: TimeInterval) async throws
}

/// The wall clock and `Task.sleep`.
public struct SystemDeliveryClock: DeliveryClock {
  /// The system clock.
  public init() {}

  public func now() -> Date { Date() }

  public func sleep(for seconds: TimeInterval) async throws {
    guard seconds > 0 else { return try Task.checkCancellation() }
    try await Task.sleep(nanoseconds: UInt64(min(seconds, 1e9) * 1_000_000_000))
  }
}

/// A clock that moves only when told: sleepers wake when ``advance(by:)`` passes their deadline.
///
/// ```swift
/// let clock = ManualDeliveryClock()
/// let queue = DeliveryQueue(outbox: outbox, format: format, policy: FlushPolicy(interval: 30), clock: clock)
/// queue.enqueue(kind: 1, timestamp: 0, payload: bytes)
/// await clock.advance(by: 30)   // the interval elapses at once; the queue sends
/// ```
///
/// `@unchecked Sendable`: all mutable state is accessed under `lock`.
public final class ManualDeliveryClock: DeliveryClock, @unchecked Sendable {
  private struct Sleeper {
    let id: UInt64
    let deadline: Date
    let continuation: CheckedContinuation<Void, any Error>
  }

  private let lock = NSLock()
  private var current: Date
  private var sleepers: [Sleeper] = []
  private var nextID: UInt64 = 0

  /// A clock that starts at `start` (now by default: outbox records carry wall-clock times).
  public init(start: Date = Date()) { current = start }

  public func now() -> Date { locked { current } }

  /// How many tasks are waiting on this clock.
  public var sleeperCount: Int { locked { sleepers.count } }

  public func sleep(for seconds: TimeInterval) async throws {
    let id = locked { () -> UInt64 in
      nextID += 1
      return nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let resumeNow: Bool = locked {
          let deadline = current.addingTimeInterval(max(0, seconds))
          guard seconds > 0 else { return true }
          sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
          return false
        }
        if resumeNow { continuation.resume() }
      }
    } onCancel: {
      let cancelled = locked { () -> Sleeper? in
        guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
        return sleepers.remove(at: index)
      }
      cancelled?.continuation.resume(throwing: CancellationError())
    }
  }

  /// `NSLocking.withLock` needs iOS 17 / macOS 14; the client library supports older systems.
  private func locked<T>(_ body: () throws -> T) rethrows -> T {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }

  /// Moves the clock forward and wakes every sleeper whose deadline has come, then yields so the
  /// woken tasks run.
  public func advance(by seconds: TimeInterval) async {
    let due = locked { () -> [Sleeper] in
      current = current.addingTimeInterval(max(0, seconds))
      let now = current
      let due = sleepers.filter { $0.deadline <= now }
      sleepers.removeAll { $0.deadline <= now }
      return due
    }
    for sleeper in due { sleeper.continuation.resume() }
    await Task.yield()
  }
}
