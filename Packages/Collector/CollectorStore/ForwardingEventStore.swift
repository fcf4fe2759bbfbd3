/// A store that hands every call to another one: conform, name the ``base``, and write only the
/// calls you change (a store that counts its writes, one that fails on purpose in a test, one that
/// adds metrics), as `ForwardingTracker` does for trackers.
///
/// ```swift
/// final class CountingStore: ForwardingEventStore {
///   let base: any EventStore
///   let writes = Mutex(0)
///   init(_ base: any EventStore) { self.base = base }
///   func write(_ batch: StoreBatch) async throws -> WriteSummary {
///     writes.withLock { $0 += 1 }
///     return try await base.write(batch)
///   }
/// }
/// ```
public protocol ForwardingEventStore: EventStore {
  /// The store calls are forwarded to.
  var base: any EventStore { get }
}

extension ForwardingEventStore {
  public var maximumConcurrentWrites: Int { base.maximumConcurrentWrites }
  public var commitGathering: CommitGathering { base.commitGathering }
  public var isFull: Bool { base.isFull }
  public func migrate() async throws { try await base.migrate() }
  public func schemaVersion() async throws -> Int { try await base.schemaVersion() }
  public var knownSchemaVersion: Int { base.knownSchemaVersion }
  public func write(_ batch: StoreBatch) async throws -> WriteSummary { try await base.write(batch) }
  public func ping() async throws { try await base.ping() }
  public func eventCount(app: String?) async throws -> Int { try await base.eventCount(app: app) }
  public func events(app: String, limit: Int) async throws -> [StoredEvent] {
    try await base.events(app: app, limit: limit)
  }
  public func storedEventIDs(app: String, among ids: [String]) async throws -> Set<ExactText> {
    try await base.storedEventIDs(app: app, among: ids)
  }
  public func counters(app: String) async throws -> [StoredCounter] { try await base.counters(app: app) }
  public func erase(_ subject: ErasureSubject) async throws -> ErasureReport { try await base.erase(subject) }
  public func prune(_ policy: PruneCutoffs) async throws -> Int { try await base.prune(policy) }
  public func reconcile() async throws -> Int { try await base.reconcile() }
  public func saveKey(_ key: KeyRecord) async throws { try await base.saveKey(key) }
  public func key(hash: String) async throws -> KeyRecord? { try await base.key(hash: hash) }
  public func keys() async throws -> [KeyRecord] { try await base.keys() }
  public func revokeKey(id: String, at time: Int64) async throws -> Bool {
    try await base.revokeKey(id: id, at: time)
  }
  public func saveSession(_ session: SessionRecord) async throws { try await base.saveSession(session) }
  public func session(hash: String) async throws -> SessionRecord? { try await base.session(hash: hash) }
  public func touchSession(hash: String, at time: Int64) async throws {
    try await base.touchSession(hash: hash, at: time)
  }
  public func endSession(hash: String, at time: Int64) async throws { try await base.endSession(hash: hash, at: time) }
  public func appendAudit(_ entry: AuditEntry) async throws { try await base.appendAudit(entry) }
  public func auditTrail(limit: Int) async throws -> [AuditEntry] { try await base.auditTrail(limit: limit) }
  public func saveView(_ view: SavedView) async throws { try await base.saveView(view) }
  public func savedViews(app: String) async throws -> [SavedView] { try await base.savedViews(app: app) }
  public func savedView(id: String) async throws -> SavedView? { try await base.savedView(id: id) }
  public func deleteView(id: String, at time: Int64) async throws -> Bool {
    try await base.deleteView(id: id, at: time)
  }
  public func addAnnotation(_ annotation: Annotation) async throws { try await base.addAnnotation(annotation) }
  public func annotations(app: String, from: Int64, to: Int64) async throws -> [Annotation] {
    try await base.annotations(app: app, from: from, to: to)
  }
  public func annotation(id: String) async throws -> Annotation? { try await base.annotation(id: id) }
  public func deleteAnnotation(id: String, at time: Int64) async throws -> Bool {
    try await base.deleteAnnotation(id: id, at: time)
  }
  public func quarantined(app: String?, limit: Int, includeReplayed: Bool) async throws -> [QuarantinedEntry] {
    try await base.quarantined(app: app, limit: limit, includeReplayed: includeReplayed)
  }
  public func quarantinedCount(app: String, from: Int64, to: Int64) async throws -> Int {
    try await base.quarantinedCount(app: app, from: from, to: to)
  }
  public func resolveQuarantined(id: String, replayedAt: Int64?, reasons: [String]) async throws {
    try await base.resolveQuarantined(id: id, replayedAt: replayedAt, reasons: reasons)
  }
  public func purgeQuarantine(app: String?, before: Int64) async throws -> Int {
    try await base.purgeQuarantine(app: app, before: before)
  }
  public func recentSubmissions(app: String, deviceID: String, limit: Int) async throws -> [StoredSubmission] {
    try await base.recentSubmissions(app: app, deviceID: deviceID, limit: limit)
  }

  public func clientDrops(app: String, from: Int64, to: Int64, appName: String?) async throws -> [ClientDropTotal] {
    try await base.clientDrops(app: app, from: from, to: to, appName: appName)
  }

  public func clientDropDevices(app: String, from: Int64, to: Int64, appName: String?) async throws -> Int64 {
    try await base.clientDropDevices(app: app, from: from, to: to, appName: appName)
  }
  public func close() async throws { try await base.close() }
}
