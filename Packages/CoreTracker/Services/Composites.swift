/// Sends every event to several services at once, under one identifier (swift-log's
/// `MultiplexLogHandler`).
///
/// Per-service payloads are resolved for the multiplexer's ``id``; the inner services all receive
/// that shape. Register services with the tracker directly when each needs its own shape.
public struct MultiplexService: TrackerService {
  public let id: ServiceID
  /// The services every event goes to, in order.
  public let services: [any TrackerService]

  /// Creates a fan-out over `services`.
  public init(id: ServiceID, services: [any TrackerService]) {
    self.id = id
    self.services = services
  }

  public func receive(_ event: TrackedEvent) {
    for service in services { service.receive(event) }
  }

  public func receive(_ counter: CounterIncrement) {
    for service in services { service.receive(counter) }
  }

  public func flush() async {
    await withTaskGroup(of: Void.self) { group in
      for service in services { group.addTask { await service.flush() } }
    }
  }

  public func sendSoon() {
    for service in services { service.sendSoon() }
  }

  public func statistics() -> ServiceStats? {
    let all = services.compactMap { $0.statistics() }
    guard !all.isEmpty else { return nil }
    return all.reduce(into: ServiceStats()) { total, stats in
      total.queued += stats.queued
      total.inFlight += stats.inFlight
      total.delivered += stats.delivered
      total.dropped.merge(stats.dropped, uniquingKeysWith: +)
      total.lastError = stats.lastError ?? total.lastError
      total.repaired.merge(stats.repaired, uniquingKeysWith: +)
    }
  }
}

/// A service that discards every event: for previews, disabled builds and placeholders.
public struct NoOpService: TrackerService {
  public let id: ServiceID
  /// Creates a service that does nothing.
  public init(id: ServiceID = ServiceID("noop")) { self.id = id }
  public func receive(_ event: TrackedEvent) {}
}

/// Adds default parameters to every event one service receives, after the tracker's pipeline.
///
/// Deprecated: defaults added here skip validation and privacy scrubbing. Put them in
/// ``TrackerConfiguration/defaultParameters`` (product trackers add theirs there), where the
/// engine adds them before consent, validation and privacy, for every service alike.
@available(*, deprecated, message: "Use TrackerConfiguration.defaultParameters: those pass validation and privacy")
public struct DefaultParametersService: TrackerService {
  /// The wrapped service.
  public let base: any TrackerService
  /// The parameters added to every event.
  public let defaults: EventParameters

  /// Wraps `base`, adding `defaults` to every event it receives.
  public init(_ base: any TrackerService, defaults: EventParameters) {
    self.base = base
    self.defaults = defaults
  }

  public var id: ServiceID { base.id }

  public func receive(_ event: TrackedEvent) {
    var event = event
    event.parameters.addMissing(from: defaults)
    base.receive(event)
  }

  /// Counters carry no parameters: they pass through unchanged.
  public func receive(_ counter: CounterIncrement) { base.receive(counter) }

  public func flush() async { await base.flush() }
  public func sendSoon() { base.sendSoon() }
  public func statistics() -> ServiceStats? { base.statistics() }
}
