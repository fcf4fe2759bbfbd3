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
/// ``take(into:checkpoints:session:)`` commits what the previous batch handed to the services.
///
/// The journal is the buffer: past ``spillThreshold`` events waiting in memory, an event waits in
/// the journal alone (a ``Command/journaled(_:)`` range the worker reads back in order), so a worker
/// held back by a full outbox costs disk, not memory, and nothing is refused for the queue's
/// capacity while the journal has room.
///
/// `@unchecked Sendable`: every stored property is read and written with `condition` locked
/// (`journal` and `privacy` are set once in `init`).
final class EventQueue: @unchecked Sendable {
  enum Command {
    case track(any CoreTrackable, Date, EventID)
    /// An event read back from the journal, its parameters already scrubbed.
    case replayed(GenericEvent, Date, EventID)
    /// Records waiting in the journal alone (spilled, or left by a dead run), by sequence number.
    case journaled(Range<UInt64>)
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
    /// Events dropped from a full journal (the disk budget) before the worker read them.
    var diskBudget = 0
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
  private var takenUpTo: UInt64?
  /// The worker gave up while held back (the queue closed): what it had not handed over stays in
  /// the journal for the next run, so nothing more is committed.
  private var abandoned = false
  /// Flush barriers that also return when the worker is held back, by token.
  private var heldBackWaiters: [Int: @Sendable () -> Void] = [:]
  private var nextWaiterToken = 0
  /// Every ``checkpointInterval`` pending commands, where the journal stood: the worker commits
  /// at each as it goes, so a process killed in a long batch replays the rest only.
  private var checkpoints: [Checkpoint] = []
  /// How many commands the worker handles between journal commits.
  static let checkpointInterval = 256

  /// After the first `count` commands of a batch, the journal's head was `mark`.
  struct Checkpoint {
    let count: Int
    let mark: UInt64
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
  /// With a journal: how many events wait in memory before the next ones wait in the journal alone.
  static var spillThreshold: Int { TrackerJournal.eventsKeptInMemory }
  /// How long the worker waits between two looks at a service without room.
  static let heldBackInterval: TimeInterval = 0.005

  /// - Parameters:
  ///   - replay: what a dead run left in the journal (streamed before anything tracked now), and
  ///     how many of those records are events.
  init(
    capacity: Int, ids: EventIDGenerator, journal: JournalFile? = nil, privacy: PrivacyStage = PrivacyStage(),
    replay: (records: Range<UInt64>, events: Int) = (0..<0, 0)
  ) {
    self.capacity = capacity
    self.ids = ids
    self.journal = journal
    self.privacy = privacy
    pending.reserveCapacity(min(capacity, 1024))
    if !replay.records.isEmpty { pending.append(.journaled(replay.records)) }
    counts.replayed = replay.events
  }

  /// Queues one tracked event; when full or closed, counts the drop instead.
  func enqueue(_ event: any CoreTrackable, at timestamp: Date) {
    condition.lock()
    counts.tracked += 1
    if admit() { append(.track(event, timestamp, ids.next(at: timestamp))) }
    condition.unlock()
  }

  /// Queues one tracked event and writes it to the journal before returning; past the spill
  /// threshold the event waits in the journal alone.
  func enqueue(_ event: any CoreTrackable, journaling entry: JournalEntry, at timestamp: Date) {
    condition.lock()
    defer { condition.unlock() }
    counts.tracked += 1
    guard !isClosed else {
      counts.shutdown += 1
      journal?.ledger.add(service: "", reason: DropReason.shutdown.rawValue, count: 1)
      return
    }
    let id = ids.next(at: timestamp)
    guard let journal else {
      if admit() { append(.track(event, timestamp, id)) }
      return
    }
    let spill = pendingTracks >= Self.spillThreshold
    let sequence = journal.append(spilled: spill) { $0.track(entry, id: id, at: timestamp, privacy: privacy) }
    counts.diskBudget += journal.takeLostEvents()
    guard let sequence else {
      counts.unjournaled += 1
      if admit() { append(.track(event, timestamp, id)) }
      return
    }
    guard spill else { return append(.track(event, timestamp, id)) }
    if case .journaled(let range) = pending.last, range.upperBound == sequence {
      pending[pending.count - 1] = .journaled(range.lowerBound..<sequence + 1)
    } else {
      pending.append(.journaled(sequence..<sequence + 1))
    }
    if worker == .sleeping { condition.signal() }
  }

  /// Counts one `track` call; whether the queue takes it (not closed, not full). Lock held.
  @inline(__always)
  private func admit() -> Bool {
    if isClosed {
      counts.shutdown += 1
      journal?.ledger.add(service: "", reason: DropReason.shutdown.rawValue, count: 1)
      return false
    }
    if pendingTracks >= capacity {
      counts.queueFull += 1
      journal?.ledger.add(service: "", reason: DropReason.queueFull.rawValue, count: 1)
      return false
    }
    return true
  }

  @inline(__always)
  private func append(_ command: Command) {
    pending.append(command)
    pendingTracks += 1
    if let journal, pending.count % Self.checkpointInterval == 0 {
      checkpoints.append(Checkpoint(count: pending.count, mark: journal.headSequence))
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
    counts.diskBudget += journal.takeLostEvents()
  }

  /// Commits the previous batch to the journal (the worker handed it to the services; `session`
  /// is the worker's session after it), then blocks until commands are pending and swaps them into
  /// `buffer` (which must be empty). Returns `false` once the queue is closed and drained.
  func take(into buffer: inout [Command], checkpoints taken: inout [Checkpoint], session: SessionState?) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    if let journal, let end = takenUpTo, !abandoned {
      journal.commit(upTo: end, session: session)
    }
    takenUpTo = nil
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
    takenUpTo = journal?.headSequence
    return true
  }

  /// Commits the journal up to `sequence` (a checkpoint of the batch being handled, or the end of
  /// the journaled records read so far).
  func commit(upTo sequence: UInt64, session: SessionState?) {
    condition.lock()
    if !abandoned { journal?.commit(upTo: sequence, session: session) }
    condition.unlock()
  }

  /// Copies up to `maximum` journaled records of `range` from `start` out of the journal (under the
  /// lock: a memory copy); the worker decodes them without it.
  func readJournal(_ range: Range<UInt64>, from start: UInt64, maximum: Int) -> (bodies: [[UInt8]], next: UInt64) {
    condition.lock()
    defer { condition.unlock() }
    guard let journal else { return ([], range.upperBound) }
    return journal.read(from: start, below: range.upperBound, maximum: maximum)
  }

  // MARK: The drop ledger (with a journal; without one, drops are counted in memory only)

  /// Counts drops in the journal's ledger, where they survive the process.
  func recordDrop(service: ServiceID?, reason: DropReason, count: Int) {
    condition.lock()
    journal?.ledger.add(service: service?.rawValue ?? "", reason: reason.rawValue, count: count)
    condition.unlock()
  }

  /// The pending drop report, or a new one of what is unreported; `nil` when there is none.
  func beginDropReport() -> (id: String, entries: [DropLedger.Entry])? {
    condition.lock()
    defer { condition.unlock() }
    guard let journal else { return nil }
    return journal.ledger.pending ?? journal.ledger.beginReport(idPrefix: journal.runID)
  }

  /// The report begun reached the services.
  func endDropReport() {
    condition.lock()
    journal?.ledger.endReport()
    condition.unlock()
  }

  /// Every drop the ledger holds (this run's and adopted ones), reported or not.
  var recordedDrops: [DropLedger.Entry] {
    condition.lock()
    defer { condition.unlock() }
    return journal?.ledger.totals ?? []
  }

  // MARK: Held back by a full service

  /// The worker waits a moment for a service that has just said it has no room; flushes waiting
  /// meanwhile return. Returns `false` once the queue is closed: the worker then gives up, and what
  /// it had not handed over stays in the journal.
  func waitForRoom() -> Bool {
    condition.lock()
    if isClosed {
      abandoned = true
      condition.unlock()
      return false
    }
    let waiters = heldBackWaiters
    heldBackWaiters = [:]
    condition.unlock()
    for waiter in waiters.values { waiter() }
    condition.lock()
    _ = condition.wait(until: Date(timeIntervalSinceNow: Self.heldBackInterval))
    let closed = isClosed
    if closed { abandoned = true }
    condition.unlock()
    return !closed
  }

  /// Runs `done` once every command queued before the call has been handled, or as soon as the
  /// worker finds a service without room (the events behind it wait in the journal): what `flush`
  /// waits for before it asks the services to deliver.
  func barrierOrHeldBack(_ done: @escaping @Sendable () -> Void) {
    let once = Once(done)
    condition.lock()
    let token = nextWaiterToken
    nextWaiterToken += 1
    heldBackWaiters[token] = once.run
    condition.unlock()
    enqueue(
      .barrier { [weak self] in
        self?.forgetWaiter(token)
        once.run()
      })
  }

  private func forgetWaiter(_ token: Int) {
    condition.lock()
    heldBackWaiters[token] = nil
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
