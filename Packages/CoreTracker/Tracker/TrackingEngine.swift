import Foundation

/// The tracker's worker-side state: enrichment, session, consent, stages, routing.
///
/// `@unchecked Sendable`: the mutable state below is touched only by the worker thread (the one
/// `run` loop), which the queue hands commands to one batch at a time; `stats` is the only state
/// read from other threads and lives behind its own lock.
final class TrackingEngine: @unchecked Sendable {
  struct Counts {
    var generated = 0
    var counted = 0
    var untimed = 0
    var handled = 0
    var routed = 0
    var damaged = 0
    /// Events dropped for consent because every service they named was denied: in `dropped` for the
    /// tracker's counts, but reported per service (each denial), not twice.
    var deniedEverywhere = 0
    var dropped: [DropReason: Int] = [:]
    var services: [ServiceID: ServiceStats] = [:]
  }

  let services: [any TrackerService]
  /// The counts other threads read; the worker adds its local ``delta`` once per batch (and before
  /// a flush barrier), so the hot loop takes no lock per event.
  let stats = Locked(Counts())
  var delta = Counts()
  private let stages: [any PipelineStage]
  private let privacy: PrivacyStage
  private let debug: DebugLog?
  private let context: ContextBox
  private var anonymousID: String
  private let sessionTimeout: TimeInterval
  private let emitsSessionEvents: Bool
  private var userID: String?
  private var userProperties = EventParameters()
  private var defaultParameters: EventParameters
  /// The consent in force (``TrackingEngineConsent``): what both of the two below allow.
  var consent: Consent
  /// The consent of the last consent command handled, in order.
  var orderedConsent: Consent
  /// The consent the app set last, and the queue's count of consent changes when it was read.
  var latestConsent: Consent
  var consentGeneration = 0
  /// Where the latest consent is kept across restarts (the journal's folder), if anywhere.
  let consentFolder: URL?
  private var session: TrackingSession?
  private var lastActivity = Date.distantPast
  private var sessionEventCount = 0
  /// Started timers by event name: when each was started.
  private var timers: [String: Date] = [:]
  /// The queue the worker takes from (set when it starts).
  var queue: EventQueue?
  /// With a journal, a service without room holds the worker back (the journal is the buffer);
  /// without one, the service's outbox makes room by dropping its oldest records.
  var holdsBack = false
  /// The queue closed while the worker was held back: nothing more is handed over; what is left
  /// stays in the journal for the next run.
  var abandoned = false
  private var dropReporting: DropReporting
  /// The most timers kept at once; starting one more discards the oldest.
  static let maximumTimers = 1_000

  /// - Parameter session: the session a previous run left in the journal, continued if the next
  ///   event comes within the timeout.
  init(
    configuration: TrackerConfiguration, services: [any TrackerService], reports: DeliveryReportHub,
    session restored: SessionState? = nil
  ) {
    self.services = services
    dropReporting = DropReporting(hub: reports, clock: configuration.clock)
    stages = configuration.stages
    privacy = configuration.privacy
    debug = configuration.debug
    context = ContextBox(configuration.context)
    anonymousID = configuration.anonymousID
    sessionTimeout = configuration.sessionTimeout
    emitsSessionEvents = configuration.emitsSessionEvents
    userID = configuration.userID
    defaultParameters = configuration.defaultParameters
    consent = configuration.consent
    orderedConsent = configuration.consent
    latestConsent = configuration.consent
    consentFolder = configuration.journal?.directory
    if let restored {
      session = restored.session
      lastActivity = restored.lastActivity
      sessionEventCount = restored.eventCount
    }
    stats.withLock { counts in
      for service in services { counts.services[service.id] = ServiceStats() }
    }
  }

  /// The worker's loop: runs until the queue is closed and drained.
  ///
  /// With a journal, an event whose services have no room holds the worker back: the rest of its
  /// batch is left to the journal (``JournalRanges``), where the disk budget may drop the oldest
  /// of it (counted), and the worker waits, then reads it back.
  func run(queue: EventQueue) {
    self.queue = queue
    holdsBack = queue.isJournaling
    var batch: [EventQueue.Command] = []
    var sequences: [UInt64] = []
    var checkpoints: [EventQueue.Checkpoint] = []
    // Where the journal stands after the last journaled command handled: drops are told (and
    // recorded) together with the commit of what caused them, at a flush and at a batch's end too.
    var handled = EventQueue.Settlement.none
    while queue.take(into: &batch, sequences: &sequences, checkpoints: &checkpoints, session: sessionState) {
      refreshConsent()
      var index = 0
      var next = 0
      while index < batch.count {
        let sequence = index < sequences.count ? sequences[index] : .max
        if holdsBack, !abandoned, case .track(let event, _, _) = batch[index], !roomFor(event.services) {
          guard sequence != .max else {
            // Not in the journal: it can only wait here (or, if the queue closes, be given up).
            publishStats(then: handled)
            _ = waitForRoom(event.services)
            handle(batch[index])
            index += 1
            continue
          }
          (batch, sequences) = JournalRanges.journalOnly(batch[index...], sequences[index...])
          (index, next) = (0, 0)
          checkpoints.removeAll()
          publishStats(then: .release(sequence))
          continue
        }
        if case .barrier = batch[index] { publishStats(then: handled) }
        handle(batch[index])
        if sequence != .max { handled = .commit(sequence + 1) }
        index += 1
        if next < checkpoints.endIndex, checkpoints[next].count == index {
          // The drops counted so far are recorded in the step that commits their events.
          publishStats(then: .commit(checkpoints[next].mark))
          next += 1
        }
      }
      batch.removeAll(keepingCapacity: true)
      sequences.removeAll(keepingCapacity: true)
      checkpoints.removeAll(keepingCapacity: true)
      publishStats(then: handled)
      reportDrops(force: false)
    }
  }

  func handle(_ command: EventQueue.Command) {
    if abandoned {
      if case .barrier(let done) = command { done() }
      return
    }
    switch command {
    case .track(let event, let timestamp, let id):
      updateSession(at: timestamp, by: id)
      process(event, id: id, at: timestamp)
      delta.handled += 1
    case .replayed(let event, let timestamp, let id):
      updateSession(at: timestamp, by: id)
      process(event, id: id, at: timestamp, replayed: true)
      delta.handled += 1
    case .journaled(let range):
      handleJournaled(range)
    case .identify(let userID):
      self.userID = userID
    case .userProperty(let key, let value):
      userProperties[key] = value
    case .defaultParameter(let key, let value):
      defaultParameters[key] = value
    case .consent(let consent):
      orderedConsentChanged(consent)
    case .count(let name, let amount, let timestamp):
      countIncrement(name, amount, at: timestamp)
    case .endSession(let id):
      endSession(by: id)
    case .startTimer(let name, let date):
      startTimer(name, at: date)
    case .reset(let newAnonymousID, let id):
      endSession(by: id)
      userID = nil
      userProperties = EventParameters()
      timers.removeAll()
      anonymousID = newAnonymousID
    case .barrier(let done):
      publishStats()
      reportDrops(force: true)
      done()
    }
  }

  // MARK: Enrichment and sessions

  /// The session as the journal keeps it between runs.
  var sessionState: SessionState? {
    session.map { SessionState(session: $0, lastActivity: lastActivity, eventCount: sessionEventCount) }
  }

  /// Ends the session after a timeout and starts one when needed, before the event `id`. The
  /// session events' ids derive from `id`, so an event replayed after a crash brings the same
  /// `session_start` (de-duplicated like the event) rather than a second one.
  private func updateSession(at timestamp: Date, by id: EventID) {
    if session != nil, sessionEventCount > 0, timestamp.timeIntervalSince(lastActivity) <= sessionTimeout {
      if timestamp > lastActivity { lastActivity = timestamp }
      sessionEventCount += 1
      return
    }
    endSession(by: id)
    var sessionID = Int64(timestamp.timeIntervalSince1970.rounded(.down))
    if let previous = session, sessionID <= previous.id { sessionID = previous.id + 1 }
    let started = TrackingSession(id: sessionID, startedAt: timestamp, number: (session?.number ?? 0) + 1)
    session = started
    lastActivity = timestamp
    sessionEventCount = 1
    if emitsSessionEvents {
      generate(
        GenericEvent(SessionEvent.start, parameters: ["session_number": .int(started.number)]),
        id: id.derived(EventID.Derivation.sessionStart), at: timestamp)
    }
  }

  private func endSession(by id: EventID) {
    guard let ended = session, sessionEventCount > 0 else { return }
    sessionEventCount = 0
    timers.removeAll()
    guard emitsSessionEvents else { return }
    let duration = Int((lastActivity.timeIntervalSince(ended.startedAt) * 1000).rounded())
    generate(
      GenericEvent(
        SessionEvent.end,
        parameters: ["session_number": .int(ended.number), "duration_ms": .int(duration)]
      ),
      id: id.derived(EventID.Derivation.sessionEnd), at: lastActivity
    )
  }

  private func generate(_ event: GenericEvent, id: EventID, at timestamp: Date) {
    delta.generated += 1
    process(event, id: id, at: timestamp)
  }

  // MARK: Pipeline and routing

  /// Enriches, filters and routes one event. A `replayed` event's parameters were scrubbed before
  /// they were journaled: the default parameters added to it are scrubbed here, the privacy stage
  /// scrubs only its user properties.
  private func process(_ event: any CoreTrackable, id: EventID, at timestamp: Date, replayed: Bool = false) {
    let selection = event.services
    var payloads: [ServiceID: ServicePayload] = [:]
    for service in services where selection.contains(service.id) {
      if let payload = event.payload(for: service.id) {
        payloads[service.id] = payload
      }
    }
    var envelope = TrackedEvent(
      id: id,
      name: event.name,
      kind: event.kind,
      parameters: event.parameters,
      timestamp: timestamp,
      contextBox: context,
      anonymousID: anonymousID,
      userID: userID,
      session: session,
      userProperties: userProperties,
      services: selection,
      payloads: payloads
    )
    if replayed {
      envelope.parametersScrubbed = true
      var defaults = defaultParameters
      privacy.scrub(&defaults)
      if !defaults.isEmpty { envelope.rewriteAllParameters { $0.addMissing(from: defaults) } }
    } else if !defaultParameters.isEmpty {
      envelope.rewriteAllParameters { $0.addMissing(from: defaultParameters) }
    }
    if let started = timers.removeValue(forKey: event.name) {
      let milliseconds = (timestamp.timeIntervalSince(started) * 1000).rounded()
      let duration = ParameterValue.int(Int(max(0, min(milliseconds, Double(Int32.max)))))
      envelope.rewriteAllParameters { $0.addMissing(from: ["duration_ms": duration]) }
    } else if event.isTimed {
      delta.untimed += 1
    }
    if consent.isOptedOut { return drop(.consent, event.name) }
    for stage in stages {
      if case .drop(let reason) = stage.process(&envelope) { return drop(reason, event.name) }
    }
    debug?.tracked(envelope)
    route(envelope)
  }

  private func route(_ envelope: TrackedEvent) {
    var receivers = 0
    var deniedByConsent = 0
    for service in services where envelope.services.contains(service.id) {
      guard consent.allows(service.id) else {
        deniedByConsent += 1
        delta.services[service.id, default: ServiceStats()].dropped[.consent, default: 0] += 1
        continue
      }
      let shaped = envelope.shaped(for: service.id)
      debug?.handed(shaped, to: service.id)
      service.receive(shaped)
      receivers += 1
      delta.services[service.id, default: ServiceStats()].received += 1
    }
    if receivers > 0 {
      delta.routed += 1
    } else {
      drop(deniedByConsent > 0 ? .consent : .noService, envelope.name)
      if deniedByConsent > 0 { delta.deniedEverywhere += 1 }
    }
  }

  /// Starts (or restarts) the timer of `name`; past ``maximumTimers`` the oldest is discarded.
  private func startTimer(_ name: String, at date: Date) {
    if timers[name] == nil, timers.count >= Self.maximumTimers,
      let oldest = timers.min(by: { $0.value < $1.value })?.key
    {
      timers[oldest] = nil
    }
    timers[name] = date
  }

  /// Counter increments skip the event stages but obey consent (refused ones are not counted).
  private func countIncrement(_ name: String, _ amount: Int, at timestamp: Date) {
    guard !consent.isOptedOut else { return }
    delta.counted += 1
    let increment = CounterIncrement(
      name: name, amount: amount, timestamp: timestamp, context: context.value, anonymousID: anonymousID
    )
    for service in services where consent.allows(service.id) { service.receive(increment) }
  }

  func drop(_ reason: DropReason, _ name: String? = nil) {
    delta.dropped[reason, default: 0] += 1
    if let name { debug?.dropped(name, reason) }
  }

  private func reportDrops(force: Bool) {
    dropReporting.handOver(
      force: force, services: services, consent: consent, context: context.value, anonymousID: anonymousID,
      queue: queue)
  }

  /// Adds the worker's local counts to the shared ones and reports the drops among them; the drops
  /// are recorded in the ledger in the same step as `step` settles the journal.
  func publishStats(then step: EventQueue.Settlement = .none) {
    guard
      delta.handled > 0 || delta.damaged > 0 || delta.deniedEverywhere > 0 || delta.generated > 0 || delta.counted > 0
        || delta.untimed > 0
        || !delta.dropped.isEmpty
        || !delta.services.isEmpty
    else {
      if case .none = step {} else { queue?.settle(step, session: sessionState, drops: []) }
      return
    }
    let published = delta
    delta = Counts()
    stats.withLock { counts in
      counts.generated += published.generated
      counts.counted += published.counted
      counts.untimed += published.untimed
      counts.handled += published.handled
      counts.routed += published.routed
      counts.damaged += published.damaged
      counts.dropped.merge(published.dropped, uniquingKeysWith: +)
      for (id, service) in published.services {
        counts.services[id, default: ServiceStats()].received += service.received
        counts.services[id, default: ServiceStats()].dropped.merge(service.dropped, uniquingKeysWith: +)
      }
    }
    var trackerDrops = published.dropped
    trackerDrops[.consent] = (trackerDrops[.consent] ?? 0) - published.deniedEverywhere
    dropReporting.published(
      dropped: trackerDrops, services: published.services, queue: queue, settling: step, session: sessionState)
  }
}

/// The names of the events the tracker emits itself.
public enum SessionEvent {
  /// Emitted before the first event of a session, with `session_number`.
  public static let start = "session_start"
  /// Emitted when a session ends (at the first event after the timeout, or on ``Tracker/endSession()``),
  /// stamped with the session's last activity, with `session_number` and `duration_ms`.
  public static let end = "session_end"
}
