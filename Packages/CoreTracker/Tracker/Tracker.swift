import Foundation

/// The default ``CoreTracker``: a pipeline on a worker thread of its own, fanning out to services.
///
/// `track` stamps the time, gives the event its id, boxes it and appends it to a lock-protected
/// queue: no system call, no await, no main queue (with a ``TrackerJournal``, it also copies the
/// event into a memory-mapped journal so that it survives a crash). The worker then, in order:
/// updates the session (30 minutes of inactivity end it), adds the duration of a started timer,
/// enriches (context, anonymous and user id, user properties, default parameters), applies consent,
/// runs the stages (sampling, validation, the app's own, privacy scrubbing) and routes the event to
/// every service it selects, each in its own shape. Every event dropped on the way is counted by
/// reason in ``stats``.
///
/// ```swift
/// let tracker = Tracker(services: [LogService()], configuration: TrackerConfiguration(
///   defaultParameters: ["product": "trendyol"],
///   sampling: SamplingStage(rates: ["scroll": 0.1])
/// ))
/// tracker.track(ProductDetailEvent.viewed(productID: "42"))
/// await tracker.flush()
/// print(tracker.stats)
/// ```
///
/// Call ``flush()`` (or ``shutdown()``) before the process exits; the worker also drains what is
/// queued when the tracker is released.
public final class Tracker: CoreTracker {
  private let queue: EventQueue
  private let engine: TrackingEngine
  private let clock: @Sendable () -> Date
  private let serviceIDs: [ServiceID]
  private let journalError: String?
  private let recoveredDamage: Int
  private let lifecycleSource: (any LifecycleSource)?
  private let lifecycleError = Locked<String?>(nil)
  private let reports: DeliveryReportHub

  /// Creates a tracker over `services` and starts its worker thread.
  ///
  /// - Parameters:
  ///   - services: where events go. Identifiers should be unique: routing and per-service shapes
  ///     are looked up by ``TrackerService/id``.
  ///   - configuration: enrichment, session, consent, stages and queue settings.
  ///
  /// With a ``TrackerConfiguration/journal``, it first opens the journal and queues what a dead
  /// run left in it; a journal that cannot be opened leaves the tracker running without one, the
  /// reason in ``TrackerStats/journalError``. With a ``TrackerConfiguration/lifecycle``, it then
  /// tracks the start events (installed or updated, opened) and starts listening to the source.
  public init(services: [any TrackerService], configuration: TrackerConfiguration = TrackerConfiguration()) {
    var configuration = configuration
    if let folder = configuration.journal?.directory, let saved = ConsentFile.load(from: folder) {
      configuration.consent = saved  // the user's last word, kept across restarts
    }
    var journal: JournalFile?
    var recovered = JournalFile.Recovered()
    var journalError: String?
    if let settings = configuration.journal {
      do {
        (journal, recovered) = try JournalFile.open(settings)
      } catch {
        journalError = "\(error)"
      }
    }
    let ids = configuration.idSeed.map(EventIDGenerator.init(seed:)) ?? EventIDGenerator()
    queue = EventQueue(
      capacity: configuration.queueCapacity, ids: ids, journal: journal, privacy: configuration.privacy,
      replay: (recovered.replay, recovered.events), consent: configuration.consent)
    let queue = queue
    reports = DeliveryReportHub(
      record: { service, reason, count in queue.recordDrop(service: service, reason: reason, count: count) },
      warn: configuration.warning)
    for service in services { service.observeDelivery(reports.observer(for: service.id)) }
    if let debug = configuration.debug {
      _ = reports.subscribe(wantsEventIDs: false, finish: {}, handler: debug.delivery)
    }
    engine = TrackingEngine(
      configuration: configuration, services: services, reports: reports, session: recovered.session)
    clock = configuration.clock
    serviceIDs = services.map(\.id)
    self.journalError = journalError
    recoveredDamage = recovered.damagedRecords
    let engine = engine
    let worker = Thread {
      engine.run(queue: queue)
      queue.workerEnded()
    }
    worker.name = "CoreTracker.worker"
    worker.qualityOfService = .utility
    worker.start()
    lifecycleSource = configuration.lifecycle?.source
    if let lifecycle = configuration.lifecycle {
      let failure = startLifecycle(lifecycle, context: configuration.context)
      lifecycleError.withLock { $0 = failure }
    }
  }

  deinit {
    lifecycleSource?.stop()
    queue.close()
    reports.finish()
  }

  /// The services events are routed to, in order.
  public var services: [any TrackerService] { engine.services }

  public func track(_ event: some CoreTrackable) {
    if queue.isJournaling {
      let entry = JournalEntry(event, serviceIDs: serviceIDs)
      queue.enqueue(event, journaling: entry, at: clock())
    } else {
      queue.enqueue(event, at: clock())
    }
  }

  public func identify(userID: String?) {
    queue.enqueue(.identify(userID))
  }

  public func setUserProperty(_ value: ParameterValue?, forKey key: String) {
    queue.enqueue(.userProperty(key, value))
  }

  public func setDefaultParameter(_ value: ParameterValue?, forKey key: String) {
    queue.enqueue(.defaultParameter(key, value))
  }

  public func setConsent(_ consent: Consent) {
    queue.enqueue(.consent(consent))
  }

  public func reset(anonymousID: String) {
    queue.enqueue(at: clock()) { .reset(anonymousID, $0) }
  }

  public func startTimer(for eventName: String) {
    queue.enqueue(.startTimer(eventName, clock()))
  }

  public func count(_ name: String, by amount: Int) {
    queue.enqueue(.count(name, amount, clock()))
  }

  /// Ends the current session now (emitting `session_end`); the next event starts a new one.
  /// Apps call it when they go to the background for good or terminate.
  public func endSession() {
    queue.enqueue(at: clock(), EventQueue.Command.endSession)
  }

  /// Asks every service to send what waits, without waiting for it: call it when the app goes to
  /// the background (then, if the platform grants time, `await flush()`). Events tracked before the
  /// call are handed to the services first.
  public func sendSoon() {
    let services = engine.services
    queue.enqueue(.barrier { for service in services { service.sendSoon() } })
  }

  /// Hands what was tracked before the call to the services and waits for them to deliver it (each
  /// up to its flush timeout). With a journal, when a service's outbox is full the events behind it
  /// wait in the journal: `flush` then delivers what the outboxes hold, and the rest follows. The
  /// worker must find the service full after `flush` was called: room made just before the call
  /// is seen, and everything is handed over before `flush` returns.
  public func flush() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      queue.barrierOrHeldBack { continuation.resume() }
    }
    await withTaskGroup(of: Void.self) { group in
      for service in engine.services { group.addTask { await service.flush() } }
    }
  }

  /// Returns once every event tracked before the call has been through the pipeline and handed to
  /// the services (which may not have sent it yet): the barrier tests use instead of sleeping.
  package func handedOver() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      queue.enqueue(.barrier { continuation.resume() })
    }
  }

  /// Flushes, then stops the worker and returns once it has ended (its journal, if any, is then
  /// committed and free for the next tracker); events tracked afterwards are dropped with
  /// ``DropReason/shutdown``.
  public func shutdown() async {
    await flush()
    queue.close()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      queue.whenWorkerEnds { continuation.resume() }
    }
  }

  /// Delivery reports from now on, per service and batch: delivered, refused with the server's
  /// reasons, dropped with a reason, retried. Each call makes a stream of its own; it ends when
  /// the tracker is released. With `includingEventIDs`, delivered reports carry their events' ids
  /// where the service knows them (the collector's). Keeps the newest 10,000 reports unread.
  public func deliveryReports(includingEventIDs: Bool = false) -> AsyncStream<DeliveryReport> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: DeliveryReport.self, bufferingPolicy: .bufferingNewest(10_000))
    let token = reports.subscribe(
      wantsEventIDs: includingEventIDs, finish: { continuation.finish() }, handler: { continuation.yield($0) })
    continuation.onTermination = { [weak reports] _ in reports?.unsubscribe(token) }
    return stream
  }

  /// Calls `handler` with every delivery report from now on, on the thread that made it (a
  /// service's sending task or the tracker's worker): keep it short. See ``deliveryReports(includingEventIDs:)``.
  ///
  /// - Returns: a subscription; ``DeliverySubscription/cancel()`` stops the reports.
  @discardableResult
  public func onDelivery(
    includingEventIDs: Bool = false, _ handler: @escaping @Sendable (DeliveryReport) -> Void
  ) -> DeliverySubscription {
    let token = reports.subscribe(wantsEventIDs: includingEventIDs, finish: {}, handler: handler)
    return DeliverySubscription { [weak reports] in reports?.unsubscribe(token) }
  }

  /// Every drop the journal's ledger holds, by service (`nil`: the tracker) and reason: this run's
  /// and those of dead runs it adopted, reported to the collector or not. Empty without a journal.
  public var recordedDrops: [DropReport.Entry] {
    queue.recordedDrops.map {
      DropReport.Entry(
        service: $0.service.isEmpty ? nil : ServiceID($0.service), reason: DropReason($0.reason), count: $0.count)
    }
  }

  /// A snapshot of the counts: tracked, generated, routed, dropped by reason, queued, per service.
  public var stats: TrackerStats {
    let queued = queue.snapshot
    let counts = engine.stats.snapshot
    var dropped = counts.dropped
    if queued.queueFull > 0 { dropped[.queueFull, default: 0] += queued.queueFull }
    if queued.shutdown > 0 { dropped[.shutdown, default: 0] += queued.shutdown }
    if queued.diskBudget > 0 { dropped[.diskBudget, default: 0] += queued.diskBudget }
    let damaged = recoveredDamage + counts.damaged
    var services = counts.services
    for service in engine.services {
      guard let own = service.statistics() else { continue }
      let tracker = services[service.id] ?? ServiceStats()
      var merged = own
      merged.received = tracker.received
      merged.dropped.merge(tracker.dropped, uniquingKeysWith: +)
      services[service.id] = merged
    }
    return TrackerStats(
      tracked: queued.tracked,
      counted: counts.counted,
      generated: counts.generated,
      routed: counts.routed,
      dropped: dropped,
      queued: queued.tracked + queued.replayed - queued.queueFull - queued.shutdown - queued.diskBudget
        - counts.handled,
      services: services,
      replayed: queued.replayed,
      untimed: counts.untimed,
      unjournaled: queued.unjournaled,
      journalError: journalError ?? (damaged > 0 ? "\(damaged) damaged journal records skipped" : nil),
      lifecycleError: lifecycleError.snapshot
    )
  }
}

/// Holds the shared tracker of a product (`TYTracker.shared`), replaceable once at start-up by the
/// composition root, as swift-log's `LoggingSystem.bootstrap` is.
///
/// Presenters default to the shared tracker so production code needs no wiring; tests pass their
/// own tracker to `init` and never touch the shared one.
public final class SharedTracker<Value: Sendable>: Sendable {
  private let state: Locked<Value?>
  private let makeDefault: @Sendable () -> Value

  /// Creates a holder whose value is made by `makeDefault` on first use unless bootstrapped before.
  public init(default makeDefault: @escaping @Sendable () -> Value) {
    state = Locked(nil)
    self.makeDefault = makeDefault
  }

  /// The shared value.
  public var value: Value {
    state.withLock { value in
      if let value { return value }
      let made = makeDefault()
      value = made
      return made
    }
  }

  /// Replaces the shared value; call it once, at start-up, before any presenter is made.
  public func bootstrap(_ value: Value) {
    state.withLock { $0 = value }
  }
}

/// Delivery reports going to a closure (``Tracker/onDelivery(includingEventIDs:_:)``) until cancelled.
public final class DeliverySubscription: Sendable {
  private let stop: Locked<(@Sendable () -> Void)?>

  init(_ stop: @escaping @Sendable () -> Void) { self.stop = Locked(stop) }

  /// Stops the reports; calling it again does nothing.
  public func cancel() {
    let stop = self.stop.withLock { stop -> (@Sendable () -> Void)? in
      defer { stop = nil }
      return stop
    }
    stop?()
  }
}
