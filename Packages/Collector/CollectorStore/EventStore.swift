/// Where the collector keeps what it accepted: events, counters and write keys.
///
/// One protocol, several engines: ``CollectorSQLite`` (embedded, one file) and
/// ``CollectorPostgres`` (shared by many collector instances). Every engine runs the same
/// conformance suite (`Tests/CollectorStoreTests`).
///
/// Contract:
/// - ``write(_:)`` is one transaction: when it returns, every row is durable; when it throws, none is
///   visible. Events already stored under the same key (app + event id) are skipped and counted as
///   duplicates; a counter total already stored under the same id (app + counter id) keeps the
///   larger count. Quarantined entries are kept once per id, with the batch's rows
///   (``QuarantinedEntry``); submissions are remembered with them (``StoredSubmission``). Client
///   retries never double-count.
/// - A method that cannot reach the storage throws ``StoreError/unavailable(_:)``.
///
/// Implementing a new engine (ClickHouse, say) means conforming to this protocol, running
/// `StoreConformance` against it, and adding it to `CollectorConfiguration.Storage`.
public protocol EventStore: AccessStore, QuarantineStore, ClientDropStore, SavedViewStore, AnnotationStore {
  /// Creates or upgrades the schema to the newest version. Safe to call on every start and from
  /// several instances at once.
  func migrate() async throws

  /// The schema version the storage is at (the number of migrations applied).
  func schemaVersion() async throws -> Int

  /// The schema version this code knows (the number of its migrations).
  var knownSchemaVersion: Int { get }

  /// Stores a batch of rows in one transaction, skipping rows already stored.
  func write(_ batch: StoreBatch) async throws -> WriteSummary

  /// Checks that the storage answers (for `/health`).
  func ping() async throws

  /// The number of stored events, for one app or for all.
  func eventCount(app: String?) async throws -> Int

  /// Stored events of one app, oldest first by occurrence, at most `limit`.
  func events(app: String, limit: Int) async throws -> [StoredEvent]

  /// Which of `ids` (at most a few thousand) are stored for `app`: what a request resent after a
  /// lost reply already had, for answers that say what was new. Ids are told apart by their bytes
  /// (``ExactText``), as the store keeps them.
  func storedEventIDs(app: String, among ids: [String]) async throws -> Set<ExactText>

  /// Stored counter rows of one app.
  func counters(app: String) async throws -> [StoredCounter]

  /// Erases one person's events and counters (by device id, user id, or both) and returns how many
  /// rows were deleted.
  func erase(_ subject: ErasureSubject) async throws -> ErasureReport

  /// Deletes events and counters that occurred before the cut-off of their app and returns how many
  /// rows were deleted.
  func prune(_ policy: PruneCutoffs) async throws -> Int

  /// Brings what the store keeps beside its events (rollups fed at insert) back in line with them
  /// where a write could not (a copy of an event merged away after it was counted); returns how
  /// many pieces it rebuilt. Stores that keep them in the transaction writing the events have
  /// nothing to do: the default returns 0. The collector runs it every few minutes.
  func reconcile() async throws -> Int

  /// Stores a new key (hashed; the secret never reaches the store).
  func saveKey(_ key: KeyRecord) async throws

  /// The key with this hash, revoked or not.
  func key(hash: String) async throws -> KeyRecord?

  /// Every key, newest first.
  func keys() async throws -> [KeyRecord]

  /// Marks a key revoked; returns false when no key has this id.
  func revokeKey(id: String, at time: Int64) async throws -> Bool

  /// Releases connections and files.
  func close() async throws

  /// How many ``write(_:)`` transactions may run at once (1: one writer, as SQLite has).
  var maximumConcurrentWrites: Int { get }

  /// How large a write the store wants before it is worth making: a committer holds rows back until
  /// this many wait or the oldest waited this long (``CommitGathering``).
  var commitGathering: CommitGathering { get }

  /// Whether the store has no room for writes now (a full ingest spool, ``write(_:)`` refusing
  /// with `overloaded`): the ingest routes then refuse a request before reading its body, so the
  /// time it would take goes to emptying the store's backlog.
  var isFull: Bool { get }
}

extension EventStore {
  /// Nothing to reconcile, by default.
  public func reconcile() async throws -> Int { 0 }

  /// One writer by default.
  public var maximumConcurrentWrites: Int { 1 }

  /// Write as soon as rows arrive, by default.
  public var commitGathering: CommitGathering { .immediately }

  /// Never full, by default: a store without a backlog of its own refuses nothing for room.
  public var isFull: Bool { false }
}

/// How many rows a store wants in one write, and how long a row may wait for others to join it.
///
/// Transactional stores write at once (``immediately``): the group committer already shares one
/// transaction among the requests that arrive while another is written. A columnar store that wants
/// few large inserts (ClickHouse makes a data part per insert and merges them later) asks for
/// `CommitGathering(rows: 1_000, wait: .seconds(1), quiet: .milliseconds(50))`: rows are held back
/// while requests keep arriving, until 1,000 wait or the oldest has waited 1 s; when no request has
/// arrived for 50 ms (clients that send their next batch only after an answer are all waiting), they
/// are written at once, so a few such clients are not held to one write a second.
public struct CommitGathering: Sendable, Hashable {
  /// Rows that make a write worth doing at once.
  public var rows: Int
  /// The longest a row waits for others before it is written anyway.
  public var wait: Duration
  /// How long without a new request ends the gathering early.
  public var quiet: Duration

  /// Rows are written as soon as they arrive.
  public static let immediately = CommitGathering(rows: 0, wait: .zero, quiet: .zero)

  /// Gather `rows` rows (at least 0), for at most `wait`, and while requests come at least every
  /// `quiet` (both at least zero).
  public init(rows: Int, wait: Duration, quiet: Duration) {
    self.rows = max(0, rows)
    self.wait = max(.zero, wait)
    self.quiet = max(.zero, quiet)
  }
}

/// A storage failure: the collector answers 503 and acknowledges nothing.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The storage could not be reached or refused the operation.
  case unavailable(String)
  /// The storage holds a schema newer than this collector knows.
  case schemaTooNew(found: Int, known: Int)
  /// The storage holds an older schema, and the reader does not migrate (`trackerctl` reading).
  case schemaTooOld(found: Int, known: Int)

  public var description: String {
    switch self {
    case .unavailable(let reason): "storage unavailable: \(reason)"
    case .schemaTooOld(let found, let known):
      "the storage's schema is at version \(found), this program reads version \(known): start the collector "
        + "once (it upgrades the schema), then read"
    case .schemaTooNew(let found, let known):
      "the storage's schema is at version \(found), this collector knows up to \(known): upgrade the collector"
    }
  }
}

/// Rows written together in one transaction: a request's events and counters, the entries it
/// had that go to the quarantine, and (SimpleAnalytics) the submission it was.
public struct StoreBatch: Sendable, Hashable {
  /// The events.
  public var events: [StoredEvent]
  /// The counter totals.
  public var counters: [StoredCounter]
  /// Entries refused by the rules, kept for a replay (``QuarantinedEntry``); an id already kept is
  /// kept once.
  public var quarantined: [QuarantinedEntry]
  /// SimpleAnalytics submissions committed with these rows (``StoredSubmission``).
  public var submissions: [StoredSubmission]
  /// Lines of client drop reports (``StoredClientDrop``); a report id, service and reason kept
  /// before is kept once.
  public var clientDrops: [StoredClientDrop]

  /// A batch of rows.
  public init(
    events: [StoredEvent] = [], counters: [StoredCounter] = [], quarantined: [QuarantinedEntry] = [],
    submissions: [StoredSubmission] = [], clientDrops: [StoredClientDrop] = []
  ) {
    self.events = events
    self.counters = counters
    self.quarantined = quarantined
    self.submissions = submissions
    self.clientDrops = clientDrops
  }

  /// Adds every row of `other` after this batch's own (a group commit, a spool's drain).
  public mutating func append(contentsOf other: StoreBatch) {
    events += other.events
    counters += other.counters
    quarantined += other.quarantined
    submissions += other.submissions
    clientDrops += other.clientDrops
  }

  /// Whether there is nothing to write.
  public var isEmpty: Bool {
    events.isEmpty && counters.isEmpty && quarantined.isEmpty && submissions.isEmpty && clientDrops.isEmpty
  }

  /// The rows it writes, of every kind.
  public var rowCount: Int {
    events.count + counters.count + quarantined.count + submissions.count + clientDrops.count
  }
}

/// What one ``EventStore/write(_:)`` did.
public struct WriteSummary: Sendable, Hashable {
  /// Events stored now.
  public var insertedEvents: Int
  /// Events skipped because they were stored before (client retries).
  public var duplicateEvents: Int
  /// Counter rows stored now.
  public var insertedCounters: Int
  /// Counter rows already stored with the same or a larger count.
  public var duplicateCounters: Int

  /// A summary.
  public init(insertedEvents: Int = 0, duplicateEvents: Int = 0, insertedCounters: Int = 0, duplicateCounters: Int = 0)
  {
    self.insertedEvents = insertedEvents
    self.duplicateEvents = duplicateEvents
    self.insertedCounters = insertedCounters
    self.duplicateCounters = duplicateCounters
  }

  /// Adds another summary's figures.
  public static func + (lhs: Self, rhs: Self) -> Self {
    Self(
      insertedEvents: lhs.insertedEvents + rhs.insertedEvents,
      duplicateEvents: lhs.duplicateEvents + rhs.duplicateEvents,
      insertedCounters: lhs.insertedCounters + rhs.insertedCounters,
      duplicateCounters: lhs.duplicateCounters + rhs.duplicateCounters
    )
  }
}

/// Whose data an erasure request removes. At least one of the two ids is set.
///
/// A user id names a **person**: every device whose first identified user (by event time) is that
/// user belongs to them, with all its events (those tracked before sign-in too) and counters; on a
/// device first identified as someone else (a shared device), only the events carrying the user's
/// id are theirs. ``PersonSQL`` finds the devices.
public struct ErasureSubject: Sendable, Hashable {
  /// The app.
  public var app: String
  /// The device (anonymous) id.
  public var deviceID: String?
  /// The signed-in user id.
  public var userID: String?

  /// A subject; `nil` when neither id is given.
  public init?(app: String, deviceID: String?, userID: String?) {
    guard deviceID?.isEmpty == false || userID?.isEmpty == false else { return nil }
    self.app = app
    self.deviceID = deviceID?.isEmpty == false ? deviceID : nil
    self.userID = userID?.isEmpty == false ? userID : nil
  }
}

/// Retention cut-offs (ms since 1970, UTC): rows that occurred before their app's cut-off go.
public struct PruneCutoffs: Sendable, Hashable {
  /// The cut-off for apps without their own; `nil` keeps their rows forever.
  public var defaultCutoff: Int64?
  /// Per-app cut-offs.
  public var perApp: [String: Int64]

  /// Cut-offs.
  public init(defaultCutoff: Int64?, perApp: [String: Int64] = [:]) {
    self.defaultCutoff = defaultCutoff
    self.perApp = perApp
  }
}

/// What an erasure removed.
public struct ErasureReport: Sendable, Hashable, Codable {
  /// Events removed.
  public var events: Int
  /// Counter rows removed.
  public var counters: Int
  /// Devices whose data was removed (wholly, or the person's events on a shared device).
  public var devices: Int

  /// A report; all zero by default.
  public init(events: Int = 0, counters: Int = 0, devices: Int = 0) {
    self.events = events
    self.counters = counters
    self.devices = devices
  }

  /// Rows removed: events and counters.
  public var rows: Int { events + counters }
}

extension EventStore {
  /// Checks, without changing anything, that the storage's schema is the one this code reads:
  /// what a reader that must not migrate (`trackerctl` reports and exports) does instead of ``migrate()``.
  public func checkSchemaForReading() async throws {
    let found = try await schemaVersion()
    if found > knownSchemaVersion { throw StoreError.schemaTooNew(found: found, known: knownSchemaVersion) }
    if found < knownSchemaVersion { throw StoreError.schemaTooOld(found: found, known: knownSchemaVersion) }
  }
}
