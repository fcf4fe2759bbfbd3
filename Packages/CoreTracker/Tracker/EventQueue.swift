import Foundation

/// The hand-off between callers of `track` and the tracker's worker thread.
///
/// Callers append under a lock (no allocation in the steady state: the worker hands back its
/// drained buffer, capacity kept). The worker swaps the whole pending buffer out at once, so it
/// holds the lock for a few instructions per batch.
///
/// Wake-ups are batched so that a busy caller does not pay a context switch per event: after a
/// batch the worker *naps* (a timed wait of ``napInterval``) before it *sleeps* (an untimed wait).
/// A caller signals a sleeping worker at once, a napping one only when ``wakeThreshold`` events
/// are pending; commands (flush barriers, identify, consent) always wake it. So an idle tracker
/// costs nothing, one event costs one wake-up, and a burst costs one wake-up per nap.
///
/// `@unchecked Sendable`: every stored property is read and written with `condition` locked.
final class EventQueue: @unchecked Sendable {
  enum Command {
    case track(any CoreTrackable, Date)
    case identify(String?)
    case userProperty(String, ParameterValue?)
    case defaultParameter(String, ParameterValue?)
    case consent(Consent)
    case count(String, Int, Date)
    case endSession
    case barrier(@Sendable () -> Void)
  }

  struct Counts {
    var tracked = 0
    var queueFull = 0
    var shutdown = 0
  }

  private let condition = NSCondition()
  private let capacity: Int
  private var pending: [Command] = []
  private var pendingTracks = 0
  private var worker = WorkerState.running
  private var isClosed = false
  private var counts = Counts()

  private enum WorkerState {
    case running, napping, sleeping
  }

  /// How long the worker waits for more events after a batch before it sleeps.
  static let napInterval: TimeInterval = 0.002
  /// How many pending events make a caller wake a napping worker early.
  static let wakeThreshold = 512

  init(capacity: Int) {
    self.capacity = capacity
    pending.reserveCapacity(min(capacity, 1024))
  }

  /// Queues one tracked event; when full or closed, counts the drop instead.
  func enqueue(_ event: any CoreTrackable, at timestamp: Date) {
    condition.lock()
    counts.tracked += 1
    if isClosed {
      counts.shutdown += 1
    } else if pendingTracks >= capacity {
      counts.queueFull += 1
    } else {
      pending.append(.track(event, timestamp))
      pendingTracks += 1
      if worker == .sleeping || (worker == .napping && pendingTracks >= Self.wakeThreshold) {
        condition.signal()
      }
    }
    condition.unlock()
  }

  /// Queues a command that is not an event: never refused for capacity. After close, barriers run
  /// at once (nothing is left to wait for) and other commands are ignored.
  func enqueue(_ command: Command) {
    condition.lock()
    guard !isClosed else {
      condition.unlock()
      if case .barrier(let done) = command { done() }
      return
    }
    pending.append(command)
    if worker != .running { condition.signal() }
    condition.unlock()
  }

  /// Blocks until commands are pending, then swaps them into `buffer` (which must be empty).
  /// Returns `false` once the queue is closed and drained.
  func take(into buffer: inout [Command]) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    if pending.isEmpty && !isClosed {
      worker = .napping
      _ = condition.wait(until: Date(timeIntervalSinceNow: Self.napInterval))
    }
    while pending.isEmpty && !isClosed {
      worker = .sleeping
      condition.wait()
    }
    worker = .running
    if pending.isEmpty { return false }
    swap(&pending, &buffer)
    pendingTracks = 0
    return true
  }

  /// Refuses new events from now on; the worker drains what is pending, then stops.
  func close() {
    condition.lock()
    isClosed = true
    condition.signal()
    condition.unlock()
  }

  var snapshot: Counts {
    condition.lock()
    defer { condition.unlock() }
    return counts
  }
}
