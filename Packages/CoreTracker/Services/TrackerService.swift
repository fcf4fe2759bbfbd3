public import Foundation

/// What a backend implements to receive events: a log, the collector, Firebase, Mixpanel, a test recorder.
///
/// A tracker calls ``receive(_:)`` on its own worker, never on the caller's thread, one event at a
/// time in tracking order, with the event already in this service's shape (see
/// ``TrackedEvent/shaped(for:)``). `receive` must not block for long: a service that uploads
/// appends to its outbox and sends later. See the "Implementing a service" article.
///
/// ```swift
/// struct PrintService: TrackerService {
///   let id = ServiceID("print")
///   func receive(_ event: TrackedEvent) { print(event.name, event.parameters) }
/// }
/// ```
public protocol TrackerService: Sendable {
  /// The identifier events use to route to (or customise for) this service.
  var id: ServiceID { get }
  /// Takes one event. Called on the tracker's worker, in order.
  func receive(_ event: TrackedEvent)
  /// Takes one counter increment, on the tracker's worker, in order with the events.
  ///
  /// The default ignores it: a service without counters says so in its documentation (and the
  /// tracker counts increments in ``TrackerStats/counted``).
  func receive(_ counter: CounterIncrement)
  /// Delivers everything received so far, or fails it for a reason the service reports in its stats.
  func flush() async
  /// Starts delivering what waits without being awaited: the app is going to the background or
  /// terminating. The default does nothing (services that do not upload have nothing to send).
  func sendSoon()
  /// The service's own counts (queued, in flight, delivered, dropped), or `nil` when it keeps none.
  func statistics() -> ServiceStats?
  /// Whether the service can take another event without dropping one it holds. A tracker with a
  /// ``TrackerJournal`` waits while it is `false` (the events wait in the journal meanwhile): a
  /// service that uploads answers for its outbox. The default is `true`.
  func hasRoom() -> Bool
  /// Starts sending ``DeliveryReport``s to `observer`: the tracker attaches one when it starts. A
  /// service that uploads reports every batch delivered, refused or retried and every event it
  /// drops. The default does nothing.
  func observeDelivery(_ observer: DeliveryObserver)
  /// Takes a report of drops for the backend's diagnostics, on the tracker's worker. The collector's
  /// service sends it with its next batch; the default ignores it.
  func receive(_ report: DropReport)
  /// Drops everything the service holds and has not sent, counted for `reason`: the user withdrew
  /// consent for it, and nothing collected before must be sent after. The default does nothing.
  func discardQueued(_ reason: DropReason)
}

extension TrackerService {
  public func receive(_ counter: CounterIncrement) {}
  public func flush() async {}
  public func sendSoon() {}
  public func statistics() -> ServiceStats? { nil }
  public func hasRoom() -> Bool { true }
  public func observeDelivery(_ observer: DeliveryObserver) {}
  public func receive(_ report: DropReport) {}
  public func discardQueued(_ reason: DropReason) {}
}

/// Why an event (or a batch) was dropped. Open like ``ServiceID``: stages and services add their own.
public struct DropReason: RawRepresentable, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
  public var rawValue: String
  public init(rawValue: String) { self.rawValue = rawValue }
  /// Creates a reason.
  public init(_ rawValue: String) { self.rawValue = rawValue }
  public var description: String { rawValue }
  public static func < (lhs: DropReason, rhs: DropReason) -> Bool { lhs.rawValue < rhs.rawValue }

  /// The tracker's queue was full when `track` was called.
  public static let queueFull = DropReason("queue_full")
  /// The user opted out, or denied consent to the service.
  public static let consent = DropReason("consent")
  /// Sampling by event name left the event out.
  public static let sampledOut = DropReason("sampled_out")
  /// The event's name is not valid.
  public static let invalidName = DropReason("invalid_name")
  /// A parameter key is not valid.
  public static let invalidParameter = DropReason("invalid_parameter")
  /// A value is not valid: a non-finite number, or a list or object nested too deep or too long.
  public static let invalidValue = DropReason("invalid_value")
  /// The event selected no service the tracker has.
  public static let noService = DropReason("no_service")
  /// The tracker was shut down before the event was processed.
  public static let shutdown = DropReason("shutdown")
  /// The journal was at its disk budget (``TrackerJournal/maximumBytes``) and its oldest events,
  /// not yet handed to the services, made room for newer ones.
  public static let diskBudget = DropReason("disk_budget")
  /// A journal record read back was damaged (a torn or corrupted file): the event could not be read.
  public static let journalDamaged = DropReason("journal_damaged")
}

/// One service's counts, as read through ``Tracker/stats``.
public struct ServiceStats: Sendable, Hashable {
  /// Events the tracker routed to the service.
  public var received: Int
  /// Events waiting to be sent.
  public var queued: Int
  /// Events in a request that has not been answered yet.
  public var inFlight: Int
  /// Events the backend accepted.
  public var delivered: Int
  /// Events the service gave up on, by reason.
  public var dropped: [DropReason: Int]
  /// The last error the service met, if any.
  public var lastError: String?
  /// Events the service changed to fit its backend's limits and still sent, by reason
  /// (a name cut to 40 characters, a string cut to 255, ...). See `LimitPolicy` in ServiceSupport.
  public var repaired: [String: Int]

  /// Creates counts; all zero by default.
  public init(
    received: Int = 0,
    queued: Int = 0,
    inFlight: Int = 0,
    delivered: Int = 0,
    dropped: [DropReason: Int] = [:],
    lastError: String? = nil,
    repaired: [String: Int] = [:]
  ) {
    self.received = received
    self.queued = queued
    self.inFlight = inFlight
    self.delivered = delivered
    self.dropped = dropped
    self.lastError = lastError
    self.repaired = repaired
  }
}

/// One increment of a counter (SimpleAnalytics' `countItem`), as services receive it.
public struct CounterIncrement: Sendable, Hashable {
  /// The counter's name, e.g. `Foregrounded app`.
  public var name: String
  /// How much to add.
  public var amount: Int
  /// When it was counted.
  public var timestamp: Date
  /// App, OS, device, locale and library.
  public var context: TrackingContext
  /// The install's anonymous identifier.
  public var anonymousID: String

  /// Creates an increment.
  public init(name: String, amount: Int, timestamp: Date, context: TrackingContext, anonymousID: String) {
    self.name = name
    self.amount = amount
    self.timestamp = timestamp
    self.context = context
    self.anonymousID = anonymousID
  }
}
