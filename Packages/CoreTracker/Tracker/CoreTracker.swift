/// What a presenter holds to track events: the user-facing side of tracking (swift-log's `Logger`),
/// apart from ``TrackerService``, which backends implement.
///
/// ``track(_:)`` is synchronous and never throws: it does no I/O, never waits on a lock held by a
/// slow service, and never hops to the main queue. Everything else happens on the tracker's worker.
///
/// Presenters take a tracker in `init`, with their product's tracker as the default, so tests pass
/// a recording one:
///
/// ```swift
/// final class ProductDetailPresenter {
///   private let tracker: any CoreTracker
///   init(product: Product, tracker: any CoreTracker = TYTracker.shared) { ... }
///   func viewDidAppear() { tracker.track(ProductDetailEvent.viewed(product)) }
/// }
/// ```
public protocol CoreTracker: Sendable {
  /// Tracks one event. Returns at once; the event reaches the services (or is counted as dropped
  /// with a reason) on the tracker's worker.
  func track(_ event: some CoreTrackable)
  /// Sets (or, with `nil`, clears) the identified user of every following event.
  ///
  /// Every event carries both the install's anonymous id and the user id, so the first event after
  /// `identify` links the two for every service: the collector's device-to-person mapping, GA4's
  /// `user_id` beside `app_instance_id`, Mixpanel's `$device_id` beside `$user_id` (its simplified
  /// ID merge).
  func identify(userID: String?)
  /// Signs the user out: ends the session, clears the user id, the user properties and the
  /// timers, and goes on under `anonymousID`, so the next person on the device is not linked to
  /// the previous one. Persist it with ``AnonymousID/replace(in:)`` when the app stores its id.
  func reset(anonymousID: String)
  /// Sets (or, with `nil`, removes) a user property sent with every following event.
  func setUserProperty(_ value: ParameterValue?, forKey key: String)
  /// Sets (or, with `nil`, removes) a default parameter (a super property) added to every following
  /// event that does not carry the key itself.
  func setDefaultParameter(_ value: ParameterValue?, forKey key: String)
  /// Changes what the user agreed to; following events obey it.
  func setConsent(_ consent: Consent)
  /// Starts timing the event named `eventName`: the next event of that name tracked in the same
  /// session carries `duration_ms`, the milliseconds since this call (Mixpanel's `time(event:)`).
  /// Starting it again restarts it; the session's end discards it; backgrounding does not.
  func startTimer(for eventName: String)
  /// Adds `amount` to the counter `name` (SimpleAnalytics' `countItem`): services that keep counters
  /// aggregate increments between sends and send totals; the others say what they do with them.
  func count(_ name: String, by amount: Int)
  /// Returns when every event tracked before the call has been handed to its services and each
  /// service has delivered it or failed it for a reason it reports.
  func flush() async
}

extension CoreTracker {
  /// Tracks an event by name, for an app that has no event enum yet (the four-line start):
  /// `tracker.track("signed_up", ["plan": "pro"])`. A ``GenericEvent``; features should declare
  /// ``CoreTrackable`` enums, which the compiler checks at every call site.
  public func track(_ name: String, _ parameters: EventParameters = EventParameters(), kind: EventKind = .event) {
    track(GenericEvent(name, kind: kind, parameters: parameters))
  }

  /// Signs the user out under a new random anonymous id (see ``reset(anonymousID:)``).
  public func reset() { reset(anonymousID: AnonymousID.random()) }

  /// Adds one to the counter `name`, e.g. `tracker.count("Foregrounded app")`.
  public func count(_ name: String) { count(name, by: 1) }

  /// Sets several default parameters at once.
  public func setDefaultParameters(_ parameters: EventParameters) {
    for parameter in parameters { setDefaultParameter(parameter.value, forKey: parameter.key) }
  }
}

/// What the user agreed to: tracking at all, and per service.
public struct Consent: Sendable, Hashable, Codable {
  /// When `true`, every event is dropped (reason ``DropReason/consent``).
  public var isOptedOut: Bool
  /// Services that must not receive anything; events still go to the others.
  public var deniedServices: Set<ServiceID>

  /// Creates a consent state.
  public init(isOptedOut: Bool = false, deniedServices: Set<ServiceID> = []) {
    self.isOptedOut = isOptedOut
    self.deniedServices = deniedServices
  }

  /// Everything allowed.
  public static let granted = Consent()
  /// Nothing is tracked.
  public static let optedOut = Consent(isOptedOut: true)

  /// Whether `service` may receive events.
  public func allows(_ service: ServiceID) -> Bool {
    !isOptedOut && !deniedServices.contains(service)
  }
}
