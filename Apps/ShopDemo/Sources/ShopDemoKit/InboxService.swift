public import CoreTracker

/// An in-memory stand-in for a backend that has no live service in this build: it keeps what it
/// receives so ShopDemo can show each service's own shape of every event.
public final class InboxService: TrackerService {
  public let id: ServiceID
  /// The product whose tracker owns this inbox, for display.
  public let product: String
  private let received = Locked<[TrackedEvent]>([])

  /// Creates an inbox for `product`'s `id` service.
  public init(id: ServiceID, product: String) {
    self.id = id
    self.product = product
  }

  public func receive(_ event: TrackedEvent) { received.withLock { $0.append(event) } }

  public func statistics() -> ServiceStats? { ServiceStats(delivered: received.snapshot.count) }

  /// Everything received, in order.
  public var events: [TrackedEvent] { received.snapshot }
}
