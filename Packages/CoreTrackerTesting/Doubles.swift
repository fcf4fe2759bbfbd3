public import CoreTracker
public import Testing

/// A tracker that fails the test on any event it was not told to expect (swift-dependencies' rule:
/// a new event that no test asserts on fails the test).
///
/// Use it where a test exercises code that must not track, or must track only the named events:
///
/// ```swift
/// let presenter = CheckoutPresenter(cart: cart, tracker: UnimplementedTracker())
/// presenter.recalculateTotals()   // tracking anything here fails the test
/// ```
public final class UnimplementedTracker: CoreTracker {
  private let allowed: Set<String>
  private let sourceLocation: SourceLocation

  /// Creates a tracker that accepts only events named in `allowing`.
  public init(allowing allowed: Set<String> = [], sourceLocation: SourceLocation = #_sourceLocation) {
    self.allowed = allowed
    self.sourceLocation = sourceLocation
  }

  public func track(_ event: some CoreTrackable) {
    guard !allowed.contains(event.name) else { return }
    Issue.record(
      "Unexpected event '\(event.name)' (\(event.kind.rawValue)) \(event.parameters)",
      sourceLocation: sourceLocation
    )
  }

  public func count(_ name: String, by amount: Int) {
    guard !allowed.contains(name) else { return }
    Issue.record("Unexpected counter '\(name)' +\(amount)", sourceLocation: sourceLocation)
  }

  public func identify(userID: String?) {}
  public func reset(anonymousID: String) {}
  public func setUserProperty(_ value: ParameterValue?, forKey key: String) {}
  public func setDefaultParameter(_ value: ParameterValue?, forKey key: String) {}
  public func setConsent(_ consent: Consent) {}
  public func startTimer(for eventName: String) {}
  public func flush() async {}
}

/// A tracker that ignores everything: for tests and previews that do not care about tracking.
public struct NoOpTracker: CoreTracker {
  /// Creates a tracker that does nothing.
  public init() {}
  public func track(_ event: some CoreTrackable) {}
  public func count(_ name: String, by amount: Int) {}
  public func identify(userID: String?) {}
  public func reset(anonymousID: String) {}
  public func setUserProperty(_ value: ParameterValue?, forKey key: String) {}
  public func setDefaultParameter(_ value: ParameterValue?, forKey key: String) {}
  public func setConsent(_ consent: Consent) {}
  public func startTimer(for eventName: String) {}
  public func flush() async {}
}

/// A service that records every envelope it receives, in order: for testing trackers, pipelines and
/// composites with the real ``Tracker``.
///
/// ```swift
/// let firebase = RecordingService(id: ServiceID("firebase"))
/// let tracker = Tracker(services: [firebase])
/// tracker.track(event)
/// await tracker.flush()
/// #expect(firebase.names == ["select_content"])
/// ```
public final class RecordingService: TrackerService {
  public let id: ServiceID
  private let state = Locked<(events: [TrackedEvent], counters: [CounterIncrement], flushes: Int)>(([], [], 0))

  /// Creates a recording service.
  public init(id: ServiceID = ServiceID("recording")) { self.id = id }

  public func receive(_ event: TrackedEvent) { state.withLock { $0.events.append(event) } }

  public func receive(_ counter: CounterIncrement) { state.withLock { $0.counters.append(counter) } }

  public func flush() async { state.withLock { $0.flushes += 1 } }

  public func statistics() -> ServiceStats? {
    ServiceStats(delivered: state.snapshot.events.count)
  }

  /// Every envelope received, in order.
  public var events: [TrackedEvent] { state.snapshot.events }
  /// Every counter increment received, in order.
  public var counters: [CounterIncrement] { state.snapshot.counters }
  /// The names received, in order.
  public var names: [String] { events.map(\.name) }
  /// How many times `flush` was called.
  public var flushCount: Int { state.snapshot.flushes }
}
