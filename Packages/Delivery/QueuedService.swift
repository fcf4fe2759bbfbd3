public import CoreTracker

/// A service whose events wait in a ``DeliveryQueue``: flushing, sending soon, room, statistics,
/// delivery reports and discarding are the queue's, so a service declares only its queue (and
/// `receive`, which encodes an event into it).
///
/// ```swift
/// public final class MyService: QueuedService {
///   public let id: ServiceID = "my-service"
///   public let queue: DeliveryQueue
///   public func receive(_ event: TrackedEvent) { queue.enqueue(kind: 0, timestamp: …, payload: encode(event)) }
/// }
/// ```
public protocol QueuedService: TrackerService {
  /// The queue the service's events wait in.
  var queue: DeliveryQueue { get }
}

extension QueuedService {
  /// Delivers what waits (``DeliveryQueue/flush()``).
  public func flush() async { await queue.flush() }

  /// The queue's counts; a service that drops events itself (a vendor's limits) adds its own.
  public func statistics() -> ServiceStats? { queue.statistics() }

  /// Sends what waits without waiting for the count or the interval (the app is leaving).
  public func sendSoon() { queue.sendSoon() }

  /// Whether the outbox can take another event without evicting one.
  public func hasRoom() -> Bool { queue.hasRoom() }

  /// Reports each request's outcome to `observer`.
  public func observeDelivery(_ observer: DeliveryObserver) { queue.observe(observer) }

  /// Drops what waits, counted under `reason` (consent withdrawn).
  public func discardQueued(_ reason: DropReason) { queue.discardQueued(reason) }
}
