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
/// Each event gets its id here, under the lock, at `track` time. With a journal, the event is also
/// written to it under the same lock (so the journal's order is the queue's), and the worker's next
/// ``take(into:session:)`` commits what the previous batch handed to the services.
///
/// `@unchecked Sendable`: every stored property is read and written with `condition` locked
/// (`journal` and `privacy` are set once in `init`).
final class EventQueue: @unchecked Sendable {
  enum Command {
    case track(any CoreTrackable, Date, EventID)
    /// An event read back from the journal after a crash, its parameters already scrubbed.
    case replayed(GenericEvent, Date, EventID)
    case identify(String?)
    case userProperty(String, ParameterValue?)
    case defaultParameter(String, ParameterValue?)
    case consent(Consent)
    case count(String, Int, Date)
    case endSession(EventID)
    case startTimer(String, Date)
    /// Sign-out: the new anonymous id, and the id the session's end derives from.
    case reset(String, EventID)
    case barrier(@Sendable () -> Void)
  }

  struct Counts {
    var tracked = 0
    var queueFull = 0
    var shutdown = 0
    var replayed = 0
    var unjournaled = 0
  }

  private let condition = NSCondition()
  private let capacity: Int
  private var pending: [Command] = []
  private var pendingTracks = 0
  private var worker = WorkerState.running
  private var isClosed = false
  private var counts = Counts()
  private var ids: EventIDGenerator
  private let journal: JournalFile?
  private let privacy: PrivacyStage
  /// The journal's head when the worker took its batch: what the next take commits.
  private var takenUpTo: JournalFile.Mark?
  /// Every ``checkpointInterval`` pending commands, where the journal stood: the worker commits
  /// at each as it goes, so a process killed in a long batch replays the rest only.
  private var checkpoints: [Checkpoint] = []
  /// How many commands the worker handles between journal commits.
  static let checkpointInterval = 256

  /// After the first `count` commands of a batch, the journal's head was `mark`.
  struct Checkpoint {
    let count: Int
    let mark: JournalFile.Mark
  }
  private var workerHasEnded = false
  private var endWaiters: [@Sendable () -> Void] = []

  /// Whether `track` writes events to a journal (then it passes a ``JournalEntry``).
  var isJournaling: Bool { journal != nil }

  private enum WorkerState {
    case running, napping, sleeping
  }

  /// How long the worker waits for more events after a batch before it sleeps.
  static let napInterval: TimeInterval = 0.002
  /// How many pending events make a caller wake a napping worker early.
  static let wakeThreshold = 512

  /// - Parameters:
  ///   - replay: commands recovered from the journal, handled before anything tracked now.
  init(
    capacity: Int, ids: EventIDGenerator, journal: JournalFile? = nil, privacy: PrivacyStage = PrivacyStage(),
    replay: [Command] = []
  ) {
    self.capacity = capacity
    self.ids = ids
    self.journal = journal
    self.privacy = privacy
    pending.reserveCapacity(min(capacity, 1024))
    pending += replay
    for case .replayed in replay { counts.replayed += 1 }
  }

  /// Queues one tracked event; when full or closed, counts the drop instead.
  func enqueue(_ event: any CoreTrackable, at timestamp: Date) {
    condition.lock()
    if admit() { append(.track(event, timestamp, ids.next(at: timestamp))) }
    condition.unlock()
  }

  /// Queues one tracked event and writes it to the journal before returning.
  func enqueue(_ event: any CoreTrackable, journaling entry: JournalEntry, at timestamp: Date) {
    condition.lock()
    if admit() {
      let id = ids.next(at: timestamp)
      if let journal, !journal.append({ $0.track(entry, id: id, at: timestamp, privacy: privacy) }) {
        counts.unjournaled += 1
      }
      append(.track(event, timestamp, id))
    }
    condition.unlock()
  }

  /// Counts one `track` call; whether the queue takes it (not closed, not full). Lock held.
  @inline(__always)
  private func admit() -> Bool {
    counts.tracked += 1
    if isClosed {
      counts.shutdown += 1
      return false
    }
    if pendingTracks >= capacity {
      counts.queueFull += 1
      return false
    }
    return true
  }

  @inline(__always)
  private func append(_ command: Command) {
    pending.append(command)
    pendingTracks += 1
    if let journal, pending.count % Self.checkpointInterval == 0 {
      checkpoints.append(Checkpoint(count: pending.count, mark: journal.mark))
    }
    if worker == .sleeping || (worker == .napping && pendingTracks >= Self.wakeThreshold) {
      condition.signal()
    }
  }

  /// Queues a command that is not an event: never refused for capacity. After close, barriers run
  /// at once (nothing is left to wait for) and other commands are ignored. Commands that change
  /// what later events carry are journaled.
  func enqueue(_ command: Command) {
    enqueue { _ in command }
  }

  /// Queues the command `make` builds from an id of its own, taken in queue order (the end of a
  /// session, a sign-out: the `session_end` they cause derives from it).
  func enqueue(at date: Date, _ make: (EventID) -> Command) {
    enqueue { ids in make(ids.next(at: date)) }
  }

  private func enqueue(_ make: (inout EventIDGenerator) -> Command) {
    condition.lock()
    let command = make(&ids)
    guard !isClosed else {
      condition.unlock()
      if case .barrier(let done) = command { done() }
      return
    }
    journalCommand(command)
    pending.append(command)
    if worker != .running { condition.signal() }
    condition.unlock()
  }

  private func journalCommand(_ command: Command) {
    guard let journal else { return }
    _ = journal.append { writer in
      if !writer.command(command, privacy: privacy) { writer.markUnencodable() }
    }
  }

  /// Commits the previous batch to the journal (the worker handed it to the services; `session`
  /// is the worker's session after it), then blocks until commands are pending and swaps them into
  /// `buffer` (which must be empty). Returns `false` once the queue is closed and drained.
  func take(into buffer: inout [Command], checkpoints taken: inout [Checkpoint], session: SessionState?) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    if let journal, let end = takenUpTo {
      journal.commit(upTo: end, session: session)
      takenUpTo = nil
    }
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
    swap(&checkpoints, &taken)
    pendingTracks = 0
    takenUpTo = journal?.mark
    return true
  }

  /// Commits the journal up to a checkpoint of the batch being handled.
  func commit(_ checkpoint: Checkpoint, session: SessionState?) {
    condition.lock()
    journal?.commit(upTo: checkpoint.mark, session: session)
    condition.unlock()
  }

  /// Refuses new events from now on; the worker drains what is pending, then stops.
  func close() {
    condition.lock()
    isClosed = true
    condition.signal()
    condition.unlock()
  }

  /// Called by the worker when its loop has ended: releases the journal to the next tracker and
  /// wakes whoever waits in ``whenWorkerEnds(_:)``.
  func workerEnded() {
    condition.lock()
    workerHasEnded = true
    journal?.release()
    let waiters = endWaiters
    endWaiters = []
    condition.unlock()
    for waiter in waiters { waiter() }
  }

  /// Runs `body` once the worker has ended (at once if it has).
  func whenWorkerEnds(_ body: @escaping @Sendable () -> Void) {
    condition.lock()
    guard !workerHasEnded else {
      condition.unlock()
      return body()
    }
    endWaiters.append(body)
    condition.unlock()
  }

  var snapshot: Counts {
    condition.lock()
    defer { condition.unlock() }
    return counts
  }
}
