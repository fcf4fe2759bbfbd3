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
