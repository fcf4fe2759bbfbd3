import CoreTracker
import Foundation

/// The sending loop's steps: read a batch, send it, act on the outcome, report it.
extension DeliveryEngine {
  /// Tells the observer, if any, what happened to `count` records (`batch`: their ids when asked for).
  func report(_ outcome: DeliveryReport.Outcome, count: Int, ids: () -> [String] = { [] }) {
    guard count > 0, let observer = observer.snapshot else { return }
    let eventIDs = observer.wantsEventIDs() ? ids() : []
    observer.report(DeliveryReport(service: nil, outcome: outcome, count: count, eventIDs: eventIDs, date: clock.now()))
  }

  /// How many records of `batch` are not events (drop reports): left out of the counts.
  func notEvents(_ batch: ArraySlice<OutboxRecord>) -> Int {
    batch.reduce(0) { $0 + (format.countsAsEvent($1) ? 0 : 1) }
  }

  /// Acknowledges through `position` and keeps the count of waiting records in step.
  func acknowledge(through position: OutboxPosition, droppedAs reason: DropReason? = nil) -> Int {
    let removed = outbox.acknowledge(through: position, droppedAs: reason)
    let adopted = outbox.hasWaitingRuns ? outbox.adoptWaitingRuns() : 0
    state.withLock { $0.pendingCounted = max(0, $0.pendingCounted - removed + adopted) }
    return removed
  }

  /// Sends batches until the outbox is empty or a send must be retried later.
  func drain() async {
    var limit = format.maximumRecords
    while true {
      if state.withLock({ $0.notBefore }) > clock.now() { return }
      // Read and marked in flight in one step: a record evicted from now on shares the outcome.
      let records = outbox.readForSending(maximumRecords: limit, maximumBytes: format.maximumBytes)
      guard !records.isEmpty else {
        if outbox.hasWaitingRuns, outbox.adoptWaitingRuns() > 0 { continue }
        return
      }
      let slice = records[...]
      if dropExpired(slice) { continue }
      let batch = slice.prefix(max(1, min(format.batchLength(slice), limit)))
      outbox.narrowInFlight(to: batch.last!.end)
      let (outcome, status) = await send(batch)
      switch outcome {
      case .delivered, .partial, .drop:
        settle(outcome, status: status, batch: batch)
        limit = format.maximumRecords
      case .split:
        outbox.endInFlight()
        if batch.count == 1 {
          let removed = acknowledge(through: batch.last!.end)
          state.withLock {
            $0.dropped[.tooLargeForServer, default: 0] += removed
            $0.lastError = "HTTP 413 for a single record"
          }
          report(.dropped(.tooLargeForServer), count: removed)
        } else {
          limit = max(1, batch.count / 2)
        }
      case .retry(let after, let error):
        outbox.endInFlight()
        state.withLock { state in
          state.attempt += 1
          state.notBefore = clock.now().addingTimeInterval(
            retry.delay(attempt: state.attempt, retryAfter: after, random: &state.random)
          )
          state.lastError = error
          if let count = policy.count { state.threshold = count + policy.failureIncrement * state.attempt }
        }
        report(.retrying(error: error), count: batch.count - notEvents(batch))
        return
      }
    }
  }

  /// A batch answered for good (delivered, partly refused, or refused): acknowledged, counted and
  /// reported.
  private func settle(_ outcome: DeliveryOutcome, status: Int, batch: ArraySlice<OutboxRecord>) {
    let removed = acknowledge(through: batch.last!.end) - notEvents(batch)
    switch outcome {
    case .partial(let rejected):
      let refused = min(removed, rejected.count)
      succeeded(delivered: removed - refused, rejected: refused)
      report(.delivered, count: removed - refused) {
        format.eventIDs(in: batch).enumerated().filter { rejected[$0.offset] == nil }.map(\.element)
      }
      report(.refused(status: status, reasons: Array(Set(rejected.values)).sorted()), count: refused)
    case .drop(let reason, let error):
      state.withLock {
        $0.dropped[reason, default: 0] += removed
        $0.lastError = error
      }
      // The reasons without the status the report carries already ("HTTP 401: key: …" → "key: …").
      let prefix = "HTTP \(status)"
      let said = error.hasPrefix(prefix) ? String(error.dropFirst(prefix.count).drop { $0 == ":" || $0 == " " }) : error
      let refused = DeliveryReport.Outcome.refused(status: status, reasons: said.isEmpty ? [] : [said])
      report(reason == .rejectedByServer ? refused : .dropped(reason), count: removed)
    default:
      succeeded(delivered: removed)
      report(.delivered, count: removed, ids: { format.eventIDs(in: batch) })
    }
  }

  /// Sends one batch: its outcome, and the HTTP status (0 for a transport error).
  func send(_ batch: ArraySlice<OutboxRecord>) async -> (DeliveryOutcome, Int) {
    var request = format.request(for: batch, sentAt: clock.now())
    if format.acceptsGzip {
      request.body = Gzip.compress(request.body)
      request.headers["Content-Encoding"] = "gzip"
    }
    state.withLock { $0.inFlight = batch.count }
    defer { state.withLock { $0.inFlight = 0 } }
    do {
      let response = try await transport.send(request)
      return (format.outcome(of: response, for: batch), response.status)
    } catch {
      return (.retry(after: nil, error: "\(error)"), 0)
    }
  }

  func succeeded(delivered: Int, rejected: Int = 0) {
    state.withLock { state in
      state.delivered += delivered
      if rejected > 0 { state.dropped[.rejectedByServer, default: 0] += rejected }
      state.attempt = 0
      state.notBefore = .distantPast
      state.threshold = policy.count
    }
  }

  /// Drops leading records older than the maximum event age; `true` if it dropped any.
  func dropExpired(_ records: ArraySlice<OutboxRecord>) -> Bool {
    let oldest = Int64((clock.now().timeIntervalSince1970 - retry.maximumEventAge) * 1000)
    let expired = records.prefix { $0.timestamp < oldest }
    guard let last = expired.last else { return false }
    _ = acknowledge(through: last.end, droppedAs: .expired)
    return true
  }
}
