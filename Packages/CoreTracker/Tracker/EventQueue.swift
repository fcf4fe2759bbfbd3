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

  let condition = NSCondition()
  private let capacity: Int
  private var pending: [Command] = []
  /// With a journal: each pending command's journal sequence number (`.max`: not in the journal).
  private var pendingSequences: [UInt64] = []
  private var pendingTracks = 0
  /// With a journal: events wait in the journal alone until the worker takes what is pending.
  private var spilling = false
  /// The sequence number after the newest journaled command pending in memory.
  private var memoryEnd: UInt64 = 0
  /// The consent last set, and how many times it was set: a withdrawal applies to everything not
  /// yet handed over, before the worker reaches the command (see ``TrackingEngine``).
  private var latestConsent: Consent
  private var consentGeneration = 0
  private var worker = WorkerState.running
  var isClosed = false
  private var counts = Counts()
  private var ids: EventIDGenerator
  let journal: JournalFile?
  private let privacy: PrivacyStage
  /// The journal's head when the worker took its batch: what the next take commits.
  private var takenUpTo: UInt64?
  /// The worker gave up while held back (the queue closed): what it had not handed over stays in
  /// the journal for the next run, so nothing more is committed.
  var abandoned = false
  /// Flush barriers that also return when the worker is held back, by token.
  var heldBackWaiters: [Int: @Sendable () -> Void] = [:]
  var nextWaiterToken = 0
  /// Waiters with a smaller token were waiting before the worker's latest look for room.
  var lookedForRoomAt = 0
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
    replay: (records: Range<UInt64>, events: Int) = (0..<0, 0), consent: Consent = .granted
  ) {
    latestConsent = consent
    self.capacity = capacity
    self.ids = ids
    self.journal = journal
    self.privacy = privacy
    pending.reserveCapacity(min(capacity, 1024))
    if !replay.records.isEmpty {
      pending.append(.journaled(replay.records))
      pendingSequences.append(.max)
    }
    // Dead runs' events the budget made room against while they were adopted: replayed, and dropped.
    let lostInAdoption = journal?.takeLostEvents() ?? 0
    counts.replayed = replay.events + lostInAdoption
    counts.diskBudget = lostInAdoption
    journal?.beforeDropping = { [unowned self] in self.keepPendingInJournalOnly() }
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
    if pendingTracks >= Self.spillThreshold { spilling = true }
    let appended = journal.append { $0.track(entry, id: id, at: timestamp, privacy: privacy) }
    counts.diskBudget += journal.takeLostEvents()
    switch appended {
    case .overBudget:
      counts.diskBudget += 1
    case .notJournaled:
      counts.unjournaled += 1
      if admit() { append(.track(event, timestamp, id)) }
    case .journaled(let sequence):
      if spilling {
        appendJournaled(sequence)
      } else {
        append(.track(event, timestamp, id), sequence: sequence)
      }
    }
  }

  /// A record that waits in the journal alone: extends the pending range it follows, or starts one.
  private func appendJournaled(_ sequence: UInt64) {
    if case .journaled(let range) = pending.last, range.upperBound == sequence {
      pending[pending.count - 1] = .journaled(range.lowerBound..<sequence + 1)
    } else {
      pending.append(.journaled(sequence..<sequence + 1))
      pendingSequences.append(.max)
    }
    if worker == .sleeping { condition.signal() }
  }

  /// Before the journal drops records for the disk budget: what waits in memory (and in the
  /// journal) waits in the journal alone from now on, so each record dropped is an event lost,
  /// counted, and no copy in memory delivers it anyway. Lock held (called from the journal).
  private func keepPendingInJournalOnly() {
    guard memoryEnd > 0 else { return }
    (pending, pendingSequences) = JournalRanges.journalOnly(pending[...], pendingSequences[...])
    pendingTracks = JournalRanges.eventsInMemory(pending)
    checkpoints.removeAll()
    spilling = true
    memoryEnd = 0
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
  private func append(_ command: Command, sequence: UInt64 = .max) {
    pending.append(command)
    if journal != nil {
      pendingSequences.append(sequence)
      if sequence != .max { memoryEnd = sequence + 1 }
    }
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
    if case .consent(let consent) = command {
      latestConsent = consent
      consentGeneration += 1
    }
    guard !isClosed else {
      condition.unlock()
      if case .barrier(let done) = command { done() }
      return
    }
    if let journal {
      let appended = journal.append { writer in
        if !writer.command(command, privacy: privacy) { writer.markUnencodable() }
      }
      counts.diskBudget += journal.takeLostEvents()
      switch appended {
      case .journaled(let sequence) where spilling:
        appendJournaled(sequence)
      case .journaled(let sequence):
        pending.append(command)
        pendingSequences.append(sequence)
        memoryEnd = sequence + 1
      case .notJournaled, .overBudget:
        pending.append(command)
        pendingSequences.append(.max)
      }
    } else {
      pending.append(command)
    }
    if worker != .running { condition.signal() }
    condition.unlock()
  }

  /// Commits the previous batch to the journal (the worker handed it to the services; `session`
  /// is the worker's session after it), then blocks until commands are pending and swaps them into
  /// `buffer` (which must be empty). Returns `false` once the queue is closed and drained.
  func take(
    into buffer: inout [Command], sequences: inout [UInt64], checkpoints taken: inout [Checkpoint],
    session: SessionState?
  ) -> Bool {
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
    swap(&pendingSequences, &sequences)
    swap(&checkpoints, &taken)
    pendingTracks = 0
    spilling = false
    if let journal {
      takenUpTo = journal.headSequence
      // What the worker now holds in memory is not the journal's to drop.
      journal.protectedEnd = max(journal.protectedEnd, memoryEnd)
      memoryEnd = 0
    }
    return true
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

  /// The consent last set and its generation (the worker applies a withdrawal when it changes).
  var consent: (Consent, Int) {
    condition.lock()
    defer { condition.unlock() }
    return (latestConsent, consentGeneration)
  }

  var snapshot: Counts {
    condition.lock()
    defer { condition.unlock() }
    return counts
  }
}
