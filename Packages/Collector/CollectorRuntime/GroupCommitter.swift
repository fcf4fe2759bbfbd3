public import CollectorStore
import Prometheus

/// Group commit: concurrent requests share transactions, and each request's call returns only
/// after its rows are committed.
///
/// While one transaction is being written, arriving requests queue; the next transaction takes all
/// of them (up to ``maximumRowsPerCommit``). Stores that take concurrent writers (PostgreSQL) get up
/// to their `maximumConcurrentWrites` transactions in flight. A failed transaction fails every request in it (they
/// answer 503 and acknowledge nothing; the clients retry, and de-duplication makes the retry safe).
/// When more than ``maximumQueuedRows`` rows wait, new requests are refused at once
/// (``CommitError/overloaded``) instead of growing memory without bound. A store that wants larger
/// writes (its `commitGathering`) gets rows held back while requests keep arriving, until that many
/// wait or the oldest has waited that long (never at shutdown).
public actor GroupCommitter {
  /// Why rows were not committed.
  public enum CommitError: Error, Sendable, Hashable {
    /// Too many rows are waiting; retry later.
    case overloaded
    /// The committer is shut down.
    case shutDown
  }

  /// The most rows waiting before new requests are refused.
  public let maximumQueuedRows: Int
  /// The most rows in one transaction.
  public let maximumRowsPerCommit: Int
  private let store: any EventStore
  private let metrics: CollectorMetrics?
  private var waiting:
    [(rows: StoreBatch, arrived: ContinuousClock.Instant, continuation: CheckedContinuation<Void, any Error>)] = []
  private var queuedRows = 0
  private var writers = 0
  private var isShutDown = false
  /// When the latest request arrived (``gather()`` ends when none has for a while).
  private var lastArrival = ContinuousClock.now
  private var idle: [CheckedContinuation<Void, Never>] = []

  /// A committer writing to `store`.
  public init(
    store: any EventStore, metrics: CollectorMetrics? = nil, maximumQueuedRows: Int = 200_000,
    maximumRowsPerCommit: Int = 20_000
  ) {
    self.store = store
    self.metrics = metrics
    self.maximumQueuedRows = maximumQueuedRows
    self.maximumRowsPerCommit = maximumRowsPerCommit
  }

  /// Whether the store has no room for writes now (``EventStore/isFull``): a request the
  /// committer would have refused is better refused before its body is read and decoded.
  public nonisolated var isFull: Bool { store.isFull }

  /// Commits `rows`; returns when they are durable, throws when they are not stored.
  public func commit(_ rows: StoreBatch) async throws {
    if rows.isEmpty { return }
    guard !isShutDown else { throw CommitError.shutDown }
    let size = rows.rowCount
    guard queuedRows + size <= maximumQueuedRows || queuedRows == 0 else { throw CommitError.overloaded }
    try await withCheckedThrowingContinuation { continuation in
      lastArrival = ContinuousClock.now
      waiting.append((rows, lastArrival, continuation))
      queuedRows += size
      metrics?.queueDepth.set(Double(queuedRows))
      if writers < max(1, store.maximumConcurrentWrites) {
        writers += 1
        Task { await self.drain() }
      }
    }
  }

  /// Stops taking rows and waits until every queued row is written.
  public func shutdown() async {
    isShutDown = true
    if writers == 0 && waiting.isEmpty { return }
    await withCheckedContinuation { idle.append($0) }
  }

  private func drain() async {
    while !waiting.isEmpty {
      await gather()
      var take = 0
      var rows = 0
      while take < waiting.count {
        let size = waiting[take].rows.rowCount
        if take > 0 && rows + size > maximumRowsPerCommit { break }
        rows += size
        take += 1
      }
      let group = Array(waiting.prefix(take))
      waiting.removeFirst(take)
      var batch = StoreBatch()
      batch.events.reserveCapacity(group.reduce(0) { $0 + $1.rows.events.count })
      for entry in group { batch.append(contentsOf: entry.rows) }
      let clock = ContinuousClock()
      let started = clock.now
      do {
        let summary = try await store.write(batch)
        metrics?.commitSeconds.record(clock.now - started)
        metrics?.commitRows.record(Double(rows))
        metrics?.duplicates.increment(by: Int64(summary.duplicateEvents))
        for entry in group { entry.continuation.resume() }
      } catch {
        for entry in group { entry.continuation.resume(throwing: error) }
      }
      queuedRows -= rows
      metrics?.queueDepth.set(Double(queuedRows))
    }
    writers -= 1
    if writers == 0 {
      for waiter in idle { waiter.resume() }
      idle.removeAll()
    }
  }

  /// Waits, in steps of at most 10 ms, while fewer rows than the store's `commitGathering` wait,
  /// the oldest of them has waited less than its `wait`, and a request has arrived within its
  /// `quiet`.
  private func gather() async {
    let gathering = store.commitGathering
    guard gathering.rows > 0, gathering.wait > .zero, gathering.quiet > .zero, let oldest = waiting.first?.arrived
    else { return }
    let clock = ContinuousClock()
    let deadline = oldest + gathering.wait
    while !isShutDown, waitingRows < gathering.rows, clock.now < deadline, clock.now - lastArrival < gathering.quiet {
      let step = min(.milliseconds(10), deadline - clock.now, lastArrival + gathering.quiet - clock.now)
      try? await clock.sleep(for: max(.milliseconds(1), step))
    }
  }

  /// Rows queued and not yet taken by a writer.
  private var waitingRows: Int { waiting.reduce(0) { $0 + $1.rows.rowCount } }
}
