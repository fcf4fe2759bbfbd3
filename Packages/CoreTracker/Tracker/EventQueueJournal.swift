import Foundation

/// The queue's side of the journal for the worker: commits, reading records back, the hold a
/// worker gives up when a service has no room, and the drop ledger. Every call takes the queue's
/// lock (the journal is not thread-safe).
extension EventQueue {
  /// What the worker does to the journal once part of its batch is handled.
  enum Settlement {
    /// Nothing yet: the batch goes on.
    case none
    /// Commits up to a sequence number (a checkpoint of the batch, or the end of the records read
    /// back so far).
    case commit(UInt64)
    /// The worker was held back at a sequence number and left the rest of its batch to the journal:
    /// what it handled before is committed, and from there on the journal may drop what it must.
    case release(UInt64)
  }

  /// Counts `drops` in the ledger and settles the journal in one hold of the lock, so that no
  /// reader of the file (nor a kill between the two) finds events counted as dropped that the next
  /// run would handle, and count, again.
  func settle(_ step: Settlement, session: SessionState?, drops: [DropLedger.Entry]) {
    condition.lock()
    defer { condition.unlock() }
    guard let journal else { return }
    for drop in drops { journal.ledger.add(service: drop.service, reason: drop.reason, count: drop.count) }
    guard !abandoned else { return }
    switch step {
    case .none: break
    case .commit(let sequence):
      journal.commit(upTo: sequence, session: session)
    case .release(let sequence):
      journal.commit(upTo: sequence, session: session)
      journal.protectedEnd = sequence
    }
  }

  /// Copies up to `maximum` journaled records of `range` from `start` out of the journal (under the
  /// lock: a memory copy); the worker decodes them without it.
  func readJournal(_ range: Range<UInt64>, from start: UInt64, maximum: Int) -> (bodies: [[UInt8]], next: UInt64) {
    condition.lock()
    defer { condition.unlock() }
    guard let journal else { return ([], range.upperBound) }
    let read = journal.read(from: start, below: range.upperBound, maximum: maximum)
    journal.protectedEnd = max(journal.protectedEnd, read.next)
    return read
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

  /// The worker waits a moment for a service that has just said it has no room; flushes that were
  /// waiting before that look return. Returns `false` once the queue is closed: the worker then
  /// gives up, and what it had not handed over stays in the journal.
  ///
  /// A flush called after the worker's last look (say, right after the service made room) is not
  /// let go by it: it waits for the next look, which may find room and hand everything over.
  func waitForRoom() -> Bool {
    condition.lock()
    if isClosed {
      abandoned = true
      condition.unlock()
      return false
    }
    let seen = heldBackWaiters.filter { $0.key < lookedForRoomAt }
    for token in seen.keys { heldBackWaiters[token] = nil }
    condition.unlock()
    for waiter in seen.values { waiter() }
    condition.lock()
    _ = condition.wait(until: Date(timeIntervalSinceNow: Self.heldBackInterval))
    lookedForRoomAt = nextWaiterToken  // the worker's next look at the services comes after these
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
}
