/// A tracker that hands every call to another one: the base of product trackers (`TYTracker`,
/// `DLTracker`), which add their own services and defaults around a ``Tracker``.
///
/// Conform and store the tracker to forward to; every requirement of ``CoreTracker`` is provided.
///
/// ```swift
/// public final class TYTracker: ForwardingTracker {
///   public let base: Tracker
///   public init(log: any TrackerService = LogService(), configuration: TrackerConfiguration = .init()) {
///     var configuration = configuration
///     configuration.defaultParameters.addMissing(from: ["product": "trendyol"])
///     base = Tracker(services: [log], configuration: configuration)
///   }
/// }
/// ```
public protocol ForwardingTracker: CoreTracker {
  /// The type of the tracker calls are forwarded to.
  associatedtype Base: CoreTracker
  /// The tracker calls are forwarded to.
  var base: Base { get }
}

extension ForwardingTracker {
  public func track(_ event: some CoreTrackable) { base.track(event) }
  public func identify(userID: String?) { base.identify(userID: userID) }
  public func reset(anonymousID: String) { base.reset(anonymousID: anonymousID) }
  public func setUserProperty(_ value: ParameterValue?, forKey key: String) {
    base.setUserProperty(value, forKey: key)
  }
  public func setDefaultParameter(_ value: ParameterValue?, forKey key: String) {
    base.setDefaultParameter(value, forKey: key)
  }
  public func setConsent(_ consent: Consent) { base.setConsent(consent) }
  public func startTimer(for eventName: String) { base.startTimer(for: eventName) }
  public func count(_ name: String, by amount: Int) { base.count(name, by: amount) }
  public func flush() async { await base.flush() }
}

extension ForwardingTracker where Base == Tracker {
  /// The engine's counts (see ``Tracker/stats``).
  public var stats: TrackerStats { base.stats }

  /// Hands queued events to the services and starts their sends (see ``Tracker/sendSoon()``).
  public func sendSoon() { base.sendSoon() }

  /// Ends the current session (see ``Tracker/endSession()``).
  public func endSession() { base.endSession() }
}
