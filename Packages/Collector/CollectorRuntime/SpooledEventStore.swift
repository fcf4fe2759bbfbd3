public import CollectorStore
import Foundation
public import Logging
import Prometheus

/// A durable spool in front of a store: ``write(_:)`` returns once the rows are `fsync`ed to a file
/// of the collector's own, and a drain writes them to the store behind it in large batches.
///
/// For stores whose writes cost more than the clients can wait for (ClickHouse makes a data part of
/// every insert and looks its ids up twice: a few hundred ms a write), the acknowledgement is the
/// spool's `fsync` and the store takes one large write for many requests. What it promises:
/// - **A 2xx is kept.** Rows are on the spool's disk before ``write(_:)`` returns, and stay there
///   until the store has taken them; a collector that stops or crashes writes them at its next start
///   (the store's writes skip rows stored before, so a record written twice is stored once).
/// - **Nothing waits without bound.** Past ``maximumRows`` waiting (the store down or slower than the
///   clients), ``write(_:)`` refuses with `CommitError.overloaded` (503, retry) and keeps nothing.
///   The spool is then ``isFull`` until the drain has written one write's worth of rows
///   (``rowsPerWrite``), and the ingest routes refuse before reading a body: a request refused
///   after it was decoded took the time the drain needed (under a sustained load, a third of the
///   requests were decoded only to be refused).
/// - **Reports lag by one drain** (about a second under load; longer while the store refuses); the
///   ids and SimpleAnalytics submissions a request's answer depends on are read from the spool too.
/// - **Erasure and pruning wait for the drain** first, so no spooled row of an erased person is
///   written after the erasure.
///
/// `collector_spool_depth_rows` says how many rows wait; a failed drain write is logged and retried
/// after `retryDelay`, doubling to 30 s.
public actor SpooledEventStore: ForwardingEventStore {
  /// The store the spool drains to.
  public nonisolated let base: any EventStore
  /// The most rows the spool holds before refusing writes.
  public nonisolated let maximumRows: Int
  /// The most rows in one write to ``base``.
  public nonisolated let rowsPerWrite: Int
  private let segments: SpoolSegments
  private let fullness = Fullness()
  private let metrics: CollectorMetrics?
  private let logger: Logger
  private let retryDelay: Duration
  private struct Record {
    var sequence: Int
    var segment: Int
    var batch: StoreBatch
    var rows: Int
    var arrived: ContinuousClock.Instant
    /// Whether a write to the store holds it now, and whether the store has taken it (a record
    /// taken out of turn stays until those before it are taken too).
    var writing = false
    var written = false
  }
  /// One write to the store: the sequences of its records, its rows and how it ended.
  private struct Write: Sendable {
    var sequences: ClosedRange<Int>
    var rows: Int
    var outcome: Result<WriteSummary, any Error>
  }
  private var pending: [Record] = []
  private var pendingRows = 0
  private var appended = 0
  private var drained = 0
  private var closing = false
  private var drainer: Task<Void, Never>?
  private var wake: CheckedContinuation<Void, Never>?
  /// A segment past this size is followed by a new one (older segments are deleted once drained).
  private let segmentBytes = 64 << 20

  /// Opens the spool in `directory` (created if need be) in front of `base`, and starts draining what
  /// an earlier run left in it. Throws when another collector holds the directory or a file in it is
  /// not the spool's.
  public init(
    directory: String, base: any EventStore, maximumRows: Int = 500_000, rowsPerWrite: Int = 50_000,
    retryDelay: Duration = .seconds(1), metrics: CollectorMetrics? = nil, logger: Logger
  ) throws {
    let (segments, recovered) = try SpoolSegments.open(directory)
    self.base = base
    self.maximumRows = maximumRows
    self.rowsPerWrite = rowsPerWrite
    self.segments = segments
    self.metrics = metrics
    self.logger = logger
    self.retryDelay = retryDelay
    let now = ContinuousClock.now
    var records: [Record] = []
    for found in recovered {
      for batch in found.batches {
        records.append(
          Record(sequence: records.count + 1, segment: found.segment, batch: batch, rows: batch.rowCount, arrived: now))
      }
    }
    let rows = records.reduce(0) { $0 + $1.rows }
    pending = records
    pendingRows = rows
    appended = records.count
    if rows > 0 {
      logger.notice("spool: \(rows) rows of an earlier run wait in \(directory); writing them to the store")
      Task { await self.startDraining() }
    }
  }

  /// One writer: the spool's appends are ordered, each one `fsync`.
  public nonisolated var maximumConcurrentWrites: Int { 1 }

  /// An append is worth making at once; the drain gathers for the store.
  public nonisolated var commitGathering: CommitGathering { .immediately }

  /// Rows in the spool that the store has not taken yet.
  public var depth: Int { pendingRows }

  /// Whether the spool has refused a write for room and the drain has not yet made room for
  /// ``rowsPerWrite`` rows (or half the spool, if that is less) since.
  public nonisolated var isFull: Bool { fullness.value }

  /// Appends `batch` to the spool and returns once it is on disk; the counts say what was spooled
  /// (the store counts duplicates when it takes them: `collector_events_duplicate_total`).
  public func write(_ batch: StoreBatch) async throws -> WriteSummary {
    guard !closing else { throw StoreError.unavailable("the spool is closed") }
    let rows = batch.rowCount
    guard pendingRows == 0 || pendingRows + rows <= maximumRows else {
      fullness.set(true)
      throw GroupCommitter.CommitError.overloaded
    }
    if segments.size >= segmentBytes { try segments.rotate() }
    try segments.append(try SpoolCoding.record(batch))
    appended += 1
    pending.append(
      Record(sequence: appended, segment: segments.current, batch: batch, rows: rows, arrived: .now))
    pendingRows += rows
    metrics?.spoolDepth.set(Double(pendingRows))
    startDraining()
    wake?.resume()
    wake = nil
    var summary = WriteSummary()
    summary.insertedEvents = batch.events.count
    summary.insertedCounters = batch.counters.count
    return summary
  }

  /// Returns once every row spooled before the call is in the store; throws when the store has not
  /// taken them within `timeout`.
  public func flush(timeout: Duration = .seconds(60)) async throws {
    let target = appended
    if drained >= target { return }
    startDraining()
    let deadline = ContinuousClock.now + timeout
    while drained < target {
      guard ContinuousClock.now < deadline else {
        throw StoreError.unavailable(
          "the spool holds \(pendingRows) rows the store has not taken yet (it waits for them before this)")
      }
      try await Task.sleep(for: .milliseconds(5))
    }
  }

  /// Erases `subject` from the store once it holds every row spooled before the call.
  public func erase(_ subject: ErasureSubject) async throws -> ErasureReport {
    try await flush()
    return try await base.erase(subject)
  }

  /// Prunes the store as `policy` says once it holds every row spooled before the call.
  public func prune(_ policy: PruneCutoffs) async throws -> Int {
    try await flush()
    return try await base.prune(policy)
  }

  /// The stored ids among `ids`, the spooled ones included.
  public func storedEventIDs(app: String, among ids: [String]) async throws -> Set<ExactText> {
    let wanted = Set(ids.map { ExactText($0) })
    var found: Set<ExactText> = []
    for event in pending.lazy.flatMap(\.batch.events) where event.app == app {
      let id = ExactText(event.eventID)
      if wanted.contains(id) { found.insert(id) }
    }
    found.formUnion(try await base.storedEventIDs(app: app, among: ids))
    return found
  }

  /// The device's latest submissions, the spooled ones included (newest first).
  public func recentSubmissions(app: String, deviceID: String, limit: Int) async throws -> [StoredSubmission] {
    let spooled = pending.flatMap(\.batch.submissions).filter {
      $0.app == app && $0.deviceID.hasSameBytes(as: deviceID)
    }
    let stored = try await base.recentSubmissions(app: app, deviceID: deviceID, limit: limit)
    return Array((spooled.reversed() + stored).prefix(limit))
  }

  /// Writes what the spool holds to the store (trying for `timeout`), then closes the store; rows
  /// the store did not take stay in the spool for the next start.
  public func close() async throws {
    try? await flush(timeout: .seconds(10))
    closing = true
    wake?.resume()
    wake = nil
    // Out of a retry's wait at once; a write the cancellation cuts short is written again at the
    // next start (its rows stay in the spool), and the store skips what it took of it.
    drainer?.cancel()
    await drainer?.value
    segments.release()
    try await base.close()
  }

  private func startDraining() {
    guard drainer == nil, !closing else { return }
    drainer = Task { await self.drain() }
  }

  /// How many writes to the store run at once: two where the store takes concurrent writes, so
  /// that the collector prepares one (its rows, the store's lookups) while the store inserts the
  /// other; a drain of one write at a time left a third of the two cores idle under a sustained
  /// load (Docs/Benchmarks.md).
  private var writers: Int { min(2, max(1, base.maximumConcurrentWrites)) }

  /// Writes the oldest waiting records to the store, as many as fit in ``rowsPerWrite`` a write and
  /// ``writers`` writes at once, until none wait. A failed write's records wait again, and the
  /// drain pauses for `retryDelay`, doubling to 30 s.
  private func drain() async {
    await withTaskGroup(of: Write.self) { group in
      var running = 0
      var delay = retryDelay
      while !closing {
        if running < writers, pending.contains(where: { !$0.writing && !$0.written }) {
          await gather(alongside: running)
          if !closing, let (batch, write) = nextWrite() {
            running += 1
            group.addTask { [base] in
              var write = write
              do { write.outcome = .success(try await base.write(batch)) } catch { write.outcome = .failure(error) }
              return write
            }
            continue
          }
        }
        if running > 0, let write = await group.next() {
          running -= 1
          if ended(write) {
            delay = retryDelay
          } else {
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(30))
          }
          continue
        }
        if !pending.contains(where: { !$0.writing && !$0.written }) { await withCheckedContinuation { wake = $0 } }
      }
    }
  }

  /// Waits while the store wants larger writes (its `commitGathering`) and the oldest waiting row is
  /// young. With `running` writes already under way, it waits for half a write's rows: the rows
  /// that came while the store was busy, not a write of the first thousand (a store that makes a
  /// part of every insert wants few of them).
  private func gather(alongside running: Int) async {
    let gathering = base.commitGathering
    func waiting() -> (rows: Int, oldest: ContinuousClock.Instant?) {
      let records = pending.lazy.filter { !$0.writing && !$0.written }
      return (records.reduce(0) { $0 + $1.rows }, records.first?.arrived)
    }
    guard gathering.rows > 0, gathering.wait > .zero, let oldest = waiting().oldest else { return }
    let wanted = running == 0 ? min(gathering.rows, rowsPerWrite) : max(gathering.rows, rowsPerWrite / 2)
    while !closing, waiting().rows < wanted, ContinuousClock.now < oldest + gathering.wait {
      try? await Task.sleep(for: .milliseconds(10))
    }
  }

  /// The oldest waiting records, whole and in a row, up to ``rowsPerWrite`` rows (at least one
  /// record), marked as being written; `nil` when none waits.
  private func nextWrite() -> (StoreBatch, Write)? {
    guard let first = pending.firstIndex(where: { !$0.writing && !$0.written }) else { return nil }
    var batch = StoreBatch()
    var rows = 0
    var end = first
    while end < pending.count, !pending[end].writing, !pending[end].written {
      if end > first && rows + pending[end].rows > rowsPerWrite { break }
      batch.append(contentsOf: pending[end].batch)
      rows += pending[end].rows
      pending[end].writing = true
      end += 1
    }
    let sequences = pending[first].sequence...pending[end - 1].sequence
    return (batch, Write(sequences: sequences, rows: rows, outcome: .success(WriteSummary())))
  }

  /// Records how `write` ended: its records taken (and the spool's oldest taken ones forgotten), or
  /// waiting again; whether it succeeded.
  private func ended(_ write: Write) -> Bool {
    let succeeded: Bool
    switch write.outcome {
    case .success(let summary):
      metrics?.duplicates.increment(by: Int64(summary.duplicateEvents))
      succeeded = true
    case .failure(let error):
      logger.error("spool: the store refused a write of \(write.rows) rows (retried after a pause): \(error)")
      succeeded = false
    }
    for index in pending.indices where write.sequences.contains(pending[index].sequence) {
      pending[index].writing = false
      pending[index].written = succeeded
    }
    let count = pending.prefix { $0.written }.count
    if count > 0 { taken(count, rows: pending.prefix(count).reduce(0) { $0 + $1.rows }) }
    return succeeded
  }

  /// The oldest `count` records are in the store: forget them and delete the files that held only them.
  private func taken(_ count: Int, rows: Int) {
    drained = pending[count - 1].sequence
    pending.removeFirst(count)
    pendingRows -= rows
    metrics?.spoolDepth.set(Double(pendingRows))
    if pendingRows <= maximumRows - min(rowsPerWrite, maximumRows / 2) { fullness.set(false) }
    if let oldest = pending.first {
      segments.remove(below: oldest.segment)
    } else {
      segments.remove(below: segments.current)
      segments.truncateCurrent()
    }
  }
}

/// A flag the spool's actor sets and any thread reads (``SpooledEventStore/isFull``).
private final class Fullness: @unchecked Sendable {
  private let lock = NSLock()
  private var full = false

  var value: Bool { lock.withLock { full } }
  func set(_ value: Bool) { lock.withLock { full = value } }
}
