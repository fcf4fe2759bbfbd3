public import CoreTracker
import Foundation

/// Durable delivery for one service: an ``Outbox`` underneath, batches in the service's
/// ``BatchFormat``, one request in flight at a time, retries with back-off, and the counts.
///
/// A service calls ``enqueue(kind:timestamp:payload:)`` from `receive` (on the tracker's worker:
/// a copy into the mapped outbox, no system call) and forwards `flush()` and `statistics()`.
/// Sends happen on a task of the queue's own: by count, by interval, on ``sendSoon()`` (the app
/// going to the background or terminating) and on ``flush()``.
///
/// Counting is exact: every record enqueued ends up once in `delivered` or once in `dropped`. A
/// record the outbox evicted to stay within its bounds while it was in flight shares its request's
/// outcome: delivered when the request succeeded, dropped (`outbox_full`) when it is retried.
///
/// Outcomes: 2xx delivered (a format may report some records rejected: dropped with
/// `rejected_by_server`); 408, 429, 5xx and transport errors retried with full-jitter back-off
/// honouring `Retry-After`; 413 splits the batch; other 4xx drop the batch (`rejected_by_server`);
/// records older than the maximum event age are dropped (`expired`).
public final class DeliveryQueue: Sendable {
  /// The outbox holding what waits.
  public var outbox: Outbox { engine.outbox }
  private let engine: DeliveryEngine
  private let loop: Task<Void, Never>
  private let ticker: Task<Void, Never>

  /// Creates the queue and starts its sending task.
  public init(
    outbox: Outbox,
    format: any BatchFormat,
    transport: any HTTPTransport = URLSessionTransport(),
    retry: RetryPolicy = RetryPolicy(),
    policy: FlushPolicy = FlushPolicy(),
    clock: any DeliveryClock = SystemDeliveryClock()
  ) {
    let engine = DeliveryEngine(
      outbox: outbox, format: format, transport: transport, retry: retry, policy: policy, clock: clock
    )
    self.engine = engine
    loop = Task.detached { await engine.run() }
    ticker = Task.detached { await engine.tick() }
  }

  deinit {
    ticker.cancel()
    engine.stop()
  }

  /// Stores one record; past the count threshold, asks the sending task to send.
  ///
  /// - Parameter countsTowardThreshold: `false` for records that must not trigger a send by count
  ///   (SimpleAnalytics: another increment of a counter already waiting).
  public func enqueue(
    kind: UInt8, timestamp: Int64, payload: some Collection<UInt8>, countsTowardThreshold: Bool = true
  ) {
    engine.enqueue(kind: kind, timestamp: timestamp, payload: payload, counts: countsTowardThreshold)
  }

  /// Counts a record the service refused before it reached the outbox (too large, unencodable).
  public func recordDrop(_ reason: DropReason) { engine.recordDrop(reason) }

  /// Drops every record waiting (this run's and ended runs' not yet moved in), counted for `reason`
  /// and reported: consent was withdrawn.
  public func discardQueued(_ reason: DropReason) {
    engine.discard(reason)
  }

  /// Sends a ``DeliveryReport`` to `observer` for every batch delivered, refused or retried and
  /// every record dropped from now on (the service's ``TrackerService/observeDelivery(_:)``).
  public func observe(_ observer: DeliveryObserver) { engine.observe(observer) }

  /// Asks for a send now without waiting for it: call it when the app goes to the background or
  /// terminates.
  public func sendSoon() { engine.trigger() }

  /// Returns when every record enqueued before the call is delivered or dropped, or sending failed
  /// for a reason reported in ``statistics()`` (after retrying for the policy's flush timeout).
  public func flush() async { await engine.flush() }

  /// Queued, in flight, delivered, dropped by reason (outbox and delivery), last error.
  public func statistics() -> ServiceStats { engine.statistics() }

  /// Whether the outbox takes another record without evicting one, and no ended run's records wait
  /// to move in first: what a service answers to ``TrackerService/hasRoom()``.
  public func hasRoom() -> Bool { engine.outbox.hasRoom && !engine.outbox.hasWaitingRuns }

  /// Returns once the sending task has acted on every trigger so far (a threshold reached, a
  /// ``sendSoon()``, an interval) and waits for the next: the barrier tests use to say "nothing was
  /// sent" without sleeping.
  package func idle() async { await engine.idle() }
}

/// The queue's state and sending loop.
///
/// `@unchecked Sendable`: the mutable state lives in `state` (a lock-protected box); the rest is
/// immutable; `run` is the only sender, so one request is in flight at a time.
final class DeliveryEngine: @unchecked Sendable {
  let outbox: Outbox
  let format: any BatchFormat
  let transport: any HTTPTransport
  let retry: RetryPolicy
  let policy: FlushPolicy
  let clock: any DeliveryClock
  private let triggers: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation
  let state: Locked<State>
  let observer = Locked<DeliveryObserver?>(nil)

  struct Waiter {
    let target: OutboxPosition
    let deadline: Date
    let continuation: CheckedContinuation<Void, Never>
  }

  struct State {
    var threshold: Int?
    /// Records waiting that count toward the threshold (SimpleAnalytics: items and new counters).
    var pendingCounted = 0
    var attempt = 0
    var notBefore = Date.distantPast
    var inFlight = 0
    var delivered = 0
    var dropped: [DropReason: Int] = [:]
    var lastError: String?
    var waiters: [Waiter] = []
    var dirty = false
    var random = SystemRandomNumberGenerator()
    /// A trigger the sending loop has not taken yet.
    var triggered = false
    /// The sending loop is acting on a trigger.
    var working = false
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// The sending loop has ended: it is idle for good.
    var stopped = false
    /// The queue was released: the loop ends after what it is doing.
    var stopping = false
  }

  init(
    outbox: Outbox,
    format: any BatchFormat,
    transport: any HTTPTransport,
    retry: RetryPolicy,
    policy: FlushPolicy,
    clock: any DeliveryClock
  ) {
    self.outbox = outbox
    self.format = format
    self.transport = transport
    self.retry = retry
    self.policy = policy
    self.clock = clock
    (triggers, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    // Records recovered from the outbox count toward the first threshold.
    state = Locked(State(threshold: policy.count, pendingCounted: outbox.stats.records))
  }

  func enqueue(kind: UInt8, timestamp: Int64, payload: some Collection<UInt8>, counts: Bool) {
    guard outbox.append(kind: kind, timestamp: timestamp, payload: payload) else { return }
    let send = state.withLock { state -> Bool in
      state.dirty = true
      guard counts else { return false }
      state.pendingCounted += 1
      guard let threshold = state.threshold else { return false }
      return state.pendingCounted >= threshold
    }
    if send { trigger() }
  }

  func trigger() {
    state.withLock { $0.triggered = true }
    continuation.yield()
  }

  func idle() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        guard !state.stopped, state.triggered || state.working else { return true }
        state.idleWaiters.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  /// Marks the sending loop as acting on a trigger (`true`) or waiting; resumes idle waiters when it
  /// waits with no trigger pending.
  private func working(_ working: Bool) {
    let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      if working { state.triggered = false }
      state.working = working
      guard !working, state.stopped || !state.triggered else { return [] }
      defer { state.idleWaiters = [] }
      return state.idleWaiters
    }
    for waiter in ready { waiter.resume() }
  }

  func recordDrop(_ reason: DropReason) {
    state.withLock { $0.dropped[reason, default: 0] += 1 }
    report(.dropped(reason), count: 1)
  }

  func discard(_ reason: DropReason) {
    repeat {
      _ = outbox.acknowledge(through: outbox.endPosition, droppedAs: reason)
    } while outbox.hasWaitingRuns && outbox.adoptWaitingRuns() > 0
    state.withLock { $0.pendingCounted = 0 }
  }

  func observe(_ observer: DeliveryObserver) {
    self.observer.withLock { $0 = observer }
    outbox.observeDrops { reason, count in
      observer.report(DeliveryReport(service: nil, outcome: .dropped(reason), count: count))
    }
  }

  func stop() {
    state.withLock { $0.stopping = true }
    continuation.finish()
  }

  func flush() async {
    let target = outbox.endPosition
    if outbox.deliveredPosition >= target { return }
    let deadline = clock.now().addingTimeInterval(policy.flushTimeout)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      state.withLock { $0.waiters.append(Waiter(target: target, deadline: deadline, continuation: continuation)) }
      trigger()
    }
  }

  func statistics() -> ServiceStats {
    let outboxStats = outbox.stats
    return state.withLock { state in
      ServiceStats(
        queued: outboxStats.records,
        inFlight: state.inFlight,
        delivered: state.delivered,
        dropped: state.dropped.merging(outboxStats.dropped, uniquingKeysWith: +),
        lastError: state.lastError
      )
    }
  }

  /// Syncs the outbox to disk and sends on the interval, until the queue is released.
  func tick() async {
    let interval = policy.interval ?? .infinity
    let step = min(policy.syncInterval, interval)
    var lastSend = clock.now()
    while !Task.isCancelled {
      do { try await clock.sleep(for: step) } catch { return }
      let dirty = state.withLock { state -> Bool in
        defer { state.dirty = false }
        return state.dirty
      }
      if dirty { outbox.sync() }
      // Measured on the clock, not by counting wake-ups: a late wake-up does not stretch the interval.
      let now = clock.now()
      if now.timeIntervalSince(lastSend) >= interval {
        lastSend = now
        if outbox.stats.records > 0 { trigger() }
      }
    }
  }

  /// The sending loop: waits for a trigger, sends until the outbox is empty or a send fails.
  func run() async {
    for await _ in triggers {
      working(true)
      defer { working(false) }
      await drain()
      // Waiters whose records are done, or who cannot be helped before their deadline, return.
      releaseWaiters()
      // Waiters still pending mean a retry is due, and so do an outbox without room (a tracker
      // with a journal waits for it) and a threshold reached in the back-off: wait it out, go again.
      while mustGoOn() {
        let wait = state.withLock { $0.notBefore.timeIntervalSince(clock.now()) }
        if wait > 0 { try? await clock.sleep(for: wait) }
        await drain()
        releaseWaiters()
      }
    }
    releaseWaiters(all: true)
    state.withLock { $0.stopped = true }
    working(false)
  }

  /// Whether to wait out the back-off and send again: a flush waits, the outbox is full, ended runs
  /// wait to move in, or the count threshold was reached while backing off (its trigger found the
  /// back-off and sent nothing; no later trigger may come).
  private func mustGoOn() -> Bool {
    let now = clock.now()
    let (waiters, stopping, thresholdWaits) = state.withLock { state in
      let reached = state.threshold.map { state.pendingCounted >= $0 } ?? false
      return (!state.waiters.isEmpty, state.stopping, reached && state.notBefore > now)
    }
    return !stopping && (waiters || thresholdWaits || !outbox.hasRoom || outbox.hasWaitingRuns)
  }

  private func releaseWaiters(all: Bool = false) {
    let delivered = outbox.deliveredPosition
    let waitingRuns = outbox.hasWaitingRuns
    let now = clock.now()
    let ready = state.withLock { state -> [Waiter] in
      let retryAt = state.notBefore
      var ready: [Waiter] = []
      state.waiters.removeAll { waiter in
        let done =
          all || (waiter.target <= delivered && !waitingRuns) || retryAt > waiter.deadline || now >= waiter.deadline
        if done { ready.append(waiter) }
        return done
      }
      return ready
    }
    for waiter in ready { waiter.continuation.resume() }
  }
}
