public import CoreTracker
public import Testing

/// One event as a ``RecordingTracker`` saw it.
public struct RecordedEvent: Sendable {
  /// The event value the code under test passed to `track`.
  public let event: any CoreTrackable
  /// The user id in force when it was tracked.
  public let userID: String?

  /// The uniform name.
  public var name: String { event.name }
  /// The kind.
  public var kind: EventKind { event.kind }
  /// The uniform parameters.
  public var parameters: EventParameters { event.parameters }

  /// What `service` receives for this event: the event's own payload for it, or the uniform
  /// serialisation; `nil` when the event does not go to that service.
  public func payload(for service: ServiceID) -> ServicePayload? {
    guard event.services.contains(service) else { return nil }
    return event.payload(for: service) ?? ServicePayload(name: event.name, parameters: event.parameters)
  }
}

/// A tracker for tests: records every call, in order, and checks what each service would receive.
///
/// Pass it to a presenter's `init` and assert on the `(key, value)` pairs each service gets, in
/// order, so a wrong key fails even when the value is right:
///
/// ```swift
/// let tracker = RecordingTracker()
/// let presenter = ProductDetailPresenter(product: .sample, tracker: tracker)
/// presenter.toggleFavourite()
/// tracker.expectReceived(by: TYService.firebase, [
///   ("add_to_wishlist", ["item_id": "42", "item_name": "Sneakers"]),
/// ])
/// ```
///
/// It runs no pipeline: it shows what the code under test asked for. Test the pipeline itself
/// with a ``Tracker`` over a ``RecordingService``.
public final class RecordingTracker: CoreTracker {
  private struct State {
    var events: [RecordedEvent] = []
    var userID: String?
    var userProperties = EventParameters()
    var defaultParameters = EventParameters()
    var consent = Consent.granted
    var counters: [(name: String, amount: Int)] = []
    var flushCount = 0
    var timers: [String] = []
    var resets: [String] = []
  }

  private let state = Locked(State())

  /// Creates an empty recording tracker.
  public init() {}

  public func track(_ event: some CoreTrackable) {
    state.withLock { $0.events.append(RecordedEvent(event: event, userID: $0.userID)) }
  }

  public func identify(userID: String?) { state.withLock { $0.userID = userID } }

  public func reset(anonymousID: String) {
    state.withLock {
      $0.userID = nil
      $0.userProperties = EventParameters()
      $0.resets.append(anonymousID)
    }
  }

  /// The anonymous ids `reset` was called with, in order.
  public var resets: [String] { state.snapshot.resets }

  public func setUserProperty(_ value: ParameterValue?, forKey key: String) {
    state.withLock { $0.userProperties[key] = value }
  }

  public func setDefaultParameter(_ value: ParameterValue?, forKey key: String) {
    state.withLock { $0.defaultParameters[key] = value }
  }

  public func setConsent(_ consent: Consent) { state.withLock { $0.consent = consent } }

  public func startTimer(for eventName: String) { state.withLock { $0.timers.append(eventName) } }

  /// The event names timers were started for, in order.
  public var startedTimers: [String] { state.snapshot.timers }

  public func count(_ name: String, by amount: Int) { state.withLock { $0.counters.append((name, amount)) } }

  public func flush() async { state.withLock { $0.flushCount += 1 } }

  /// Every tracked event, in order.
  public var events: [RecordedEvent] { state.snapshot.events }
  /// The uniform names of the tracked events, in order.
  public var names: [String] { events.map(\.name) }
  /// The identified user.
  public var userID: String? { state.snapshot.userID }
  /// The user properties set so far.
  public var userProperties: EventParameters { state.snapshot.userProperties }
  /// The default parameters set so far.
  public var defaultParameters: EventParameters { state.snapshot.defaultParameters }
  /// The consent set last.
  public var consent: Consent { state.snapshot.consent }
  /// How many times `flush` was called.
  public var flushCount: Int { state.snapshot.flushCount }
  /// Counter increments, in order.
  public var counters: [(name: String, amount: Int)] { state.snapshot.counters }

  /// What `service` receives, in order: each event's own payload for it, or its uniform serialisation.
  public func payloads(for service: ServiceID) -> [ServicePayload] {
    events.compactMap { $0.payload(for: service) }
  }

  /// Forgets everything recorded so far.
  public func reset() { state.withLock { $0 = State() } }

  /// Records a test failure unless `service` received exactly `expected`: the same events, in order,
  /// each with the same name and the same `(key, value)` pairs in the same order.
  ///
  /// The failure says which event, which position and what differs.
  public func expectReceived(
    by service: ServiceID,
    _ expected: [(name: String, parameters: EventParameters)],
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let problems = Self.differences(
      actual: payloads(for: service),
      expected: expected.map { ServicePayload(name: $0.name, parameters: $0.parameters) }
    )
    for problem in problems {
      Issue.record("\(service): \(problem)", sourceLocation: sourceLocation)
    }
  }

  /// Records a test failure unless the tracked events' uniform names are exactly `expected`.
  public func expectNames(_ expected: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    let actual = names
    if actual != expected {
      Issue.record("tracked \(actual), expected \(expected)", sourceLocation: sourceLocation)
    }
  }

  /// Human-readable differences between two payload lists (empty when equal).
  static func differences(actual: [ServicePayload], expected: [ServicePayload]) -> [String] {
    var problems: [String] = []
    if actual.count != expected.count {
      problems.append(
        "received \(actual.count) event(s) \(actual.map(\.name)), expected \(expected.count) \(expected.map(\.name))"
      )
    }
    for (index, (got, want)) in zip(actual, expected).enumerated() {
      let position = "event #\(index + 1)"
      if got.name != want.name {
        problems.append("\(position) is named '\(got.name)', expected '\(want.name)'")
      }
      let gotPairs = got.parameters.pairs
      let wantPairs = want.parameters.pairs
      for (slot, (g, w)) in zip(gotPairs, wantPairs).enumerated() where g.key != w.key || g.value != w.value {
        if g.key != w.key {
          problems.append(
            "\(position) '\(want.name)' parameter #\(slot + 1): key '\(g.key)' = \(g.value), expected key '\(w.key)' = \(w.value)"
          )
        } else {
          let inner =
            ValueDifference.first(g.value, w.value) ?? ValueDifference(path: "", got: "\(g.value)", want: "\(w.value)")
          problems.append(
            "\(position) '\(want.name)' parameter '\(g.key)\(inner.path)' = \(inner.got), expected \(inner.want)")
        }
      }
      if gotPairs.count > wantPairs.count {
        let extra = gotPairs[wantPairs.count...].map { "\($0.key) = \($0.value)" }
        problems.append("\(position) '\(want.name)' has unexpected parameters: \(extra.joined(separator: ", "))")
      } else if gotPairs.count < wantPairs.count {
        let missing = wantPairs[gotPairs.count...].map { "\($0.key) = \($0.value)" }
        problems.append("\(position) '\(want.name)' lacks parameters: \(missing.joined(separator: ", "))")
      }
    }
    return problems
  }
}

/// Where two structured values first differ (`[2].price`, `.tags`), so a failure names the element
/// instead of printing two whole orders.
struct ValueDifference {
  var path: String
  var got: String
  var want: String

  /// The first difference, or `nil` when the values are equal.
  static func first(_ got: ParameterValue, _ want: ParameterValue) -> ValueDifference? {
    guard got != want else { return nil }
    switch (got, want) {
    case (.list(let gotList), .list(let wantList)):
      for (index, (g, w)) in zip(gotList, wantList).enumerated() {
        if let inner = first(g, w) { return inner.inside("[\(index)]") }
      }
      return ValueDifference(path: "", got: "\(gotList.count) elements", want: "\(wantList.count)")
    case (.object(let gotFields), .object(let wantFields)):
      for (g, w) in zip(gotFields, wantFields) {
        guard g.key == w.key else { return ValueDifference(path: "", got: "key '\(g.key)'", want: "key '\(w.key)'") }
        if let inner = first(g.value, w.value) { return inner.inside(".\(g.key)") }
      }
      return ValueDifference(path: "", got: "keys \(gotFields.keys)", want: "\(wantFields.keys)")
    default:
      return ValueDifference(path: "", got: "\(got)", want: "\(want)")
    }
  }

  private func inside(_ step: String) -> ValueDifference {
    ValueDifference(path: step + path, got: got, want: want)
  }
}
