public import Foundation

/// Crash-proof tracking: where a ``Tracker`` journals every event before `track` returns.
///
/// With a journal, `track` writes the event (its id, time, name, parameters and per-service
/// shapes, already scrubbed by the tracker's ``PrivacyStage``) into a memory-mapped file on the
/// caller's thread, and the worker marks it done once every service has taken it (into its own
/// durable outbox, for the services that upload). If the process dies in between (a crash,
/// `kill -9`, the system ending a suspended app), the next tracker opened on the same directory
/// replays what was not done, with the same event ids, so services and the collector
/// de-duplicate whatever had already gone out.
///
/// ```swift
/// let storage = try FileManager.default.url(for: .applicationSupportDirectory, in: .userDomainMask,
///                                           appropriateFor: nil, create: true)
/// let tracker = Tracker(services: services, configuration: TrackerConfiguration(
///   journal: TrackerJournal(directory: storage.appendingPathComponent("tracker-journal"))
/// ))
/// ```
///
/// What it guarantees and what it does not:
/// - The process dying at any instant after `track` returned loses nothing. A power loss or a
///   kernel panic can lose what the system had not written back yet (the outbox is the same).
/// - Personal values never reach the file in the clear: they are dropped or hashed on the caller's
///   thread as the privacy stage would. User properties and default parameters whose keys are
///   personal are not journaled at all: an event replayed after a crash goes without them.
/// - Counter increments are not journaled: a replayed increment could be counted twice.
/// - It is the tracker's buffer: a service without room holds the worker back and events wait in
///   the journal (up to ``maximumBytes``), never evicted from an outbox. Drops are recorded in it
///   and reported to the collector; the consent last set is kept beside it.
/// - The session survives the restart: a run that starts within the session timeout continues it.
/// - Several processes may use one directory (an app and its extensions in an App Group
///   container): each run writes a journal of its own, and a dead run's journal is adopted by
///   exactly one of the next trackers opened there.
///
/// The cost on the caller's thread is reading the event's parameters and copying them into the
/// file: see `Docs/Benchmarks.md` for `track` with and without a journal.
public struct TrackerJournal: Sendable, Hashable {
  /// The folder holding the journal files (created if needed). Use one folder per tracker.
  public var directory: URL
  /// The file's size at start. Default 256 KiB.
  public var initialBytes: Int
  /// The disk budget: the most the file may grow to while the worker is behind (a full outbox holds
  /// it back, or the network is down). At the budget the file wraps; when it is full, its oldest
  /// events are dropped to make room, each counted as ``DropReason/diskBudget`` in the stats and in
  /// the durable drop record (`Docs/Delivery.md`). Default 64 MiB (about 390,000 events of five
  /// parameters).
  public var maximumBytes: Int

  /// How many events wait in memory for the tracker's worker; past it, events wait in the journal
  /// alone (no memory beyond the file's pages) and the worker reads them back in order.
  public static let eventsKeptInMemory = 8_192

  /// Creates a journal configuration; sizes are raised to at least 8 KiB (a 4 KiB header with the
  /// drop ledger, and room for records).
  public init(directory: URL, initialBytes: Int = 256 << 10, maximumBytes: Int = 64 << 20) {
    self.directory = directory
    self.initialBytes = max(8192, initialBytes)
    self.maximumBytes = max(self.initialBytes, maximumBytes)
  }
}
