/// What a tracker did with the events it was given, read through ``Tracker/stats``.
///
/// The event counts always balance: `tracked + replayed + generated == routed + totalDropped + queued`
/// (counter increments are counted apart, in ``counted``).
public struct TrackerStats: Sendable, Hashable {
  /// Calls to `track`.
  public var tracked: Int
  /// Events a dead run had tracked but not handed to the services, read back from the
  /// ``TrackerJournal`` at start and processed by this tracker.
  public var replayed: Int
  /// Counter increments handed to services.
  public var counted: Int
  /// Events the tracker made itself (`session_start`, `session_end`).
  public var generated: Int
  /// Events handed to at least one service.
  public var routed: Int
  /// Events dropped before reaching any service, by reason (queue full, consent, sampling, ...).
  public var dropped: [DropReason: Int]
  /// Events waiting for, or being processed by, the worker.
  public var queued: Int
  /// Per service: what the tracker routed to it, merged with the service's own counts.
  public var services: [ServiceID: ServiceStats]
  /// Timed events (``CoreTrackable/isTimed``) tracked without a started timer, sent without
  /// `duration_ms`.
  public var untimed: Int
  /// Events tracked without the journal's protection: the event's record was larger than the whole
  /// journal, the file could not grow, or the event held a value nested too deep to journal. They
  /// are processed as usual.
  public var unjournaled: Int
  /// Why the configured journal is not in use (it could not be opened), or how many damaged
  /// records it skipped at start; `nil` when all is well or there is no journal.
  public var journalError: String?
  /// Why lifecycle tracking could not store the app's version (so the next run may track the
  /// install or update again); `nil` when all is well or lifecycle tracking is off.
  public var lifecycleError: String?

  /// Creates stats; all zero by default.
  public init(
    tracked: Int = 0,
    counted: Int = 0,
    generated: Int = 0,
    routed: Int = 0,
    dropped: [DropReason: Int] = [:],
    queued: Int = 0,
    services: [ServiceID: ServiceStats] = [:],
    replayed: Int = 0,
    untimed: Int = 0,
    unjournaled: Int = 0,
    journalError: String? = nil,
    lifecycleError: String? = nil
  ) {
    self.tracked = tracked
    self.replayed = replayed
    self.untimed = untimed
    self.unjournaled = unjournaled
    self.journalError = journalError
    self.lifecycleError = lifecycleError
    self.counted = counted
    self.generated = generated
    self.routed = routed
    self.dropped = dropped
    self.queued = queued
    self.services = services
  }

  /// All drops, whatever the reason.
  public var totalDropped: Int { dropped.values.reduce(0, +) }

  /// The count for one reason (0 when none).
  public func dropped(_ reason: DropReason) -> Int { dropped[reason, default: 0] }
}
