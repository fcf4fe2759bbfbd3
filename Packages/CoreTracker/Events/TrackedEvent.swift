public import Foundation

/// The envelope every service receives: one `Sendable` value per event (swift-log's `LogEvent` idea),
/// so a new field never breaks a service.
///
/// The tracker builds it from a ``CoreTrackable`` on its worker: the uniform serialisation
/// (``name`` + ``parameters``) plus identity, time, context, user and session. By the time a
/// service sees it, ``name`` and ``parameters`` are already that service's own shape (its
/// ``ServicePayload`` if the event declared one) and ``payloads`` is empty.
public struct TrackedEvent: Sendable, Hashable {
  /// The event's identity, assigned at `track` time; the idempotency key end to end.
  public var id: EventID
  /// The event's name.
  public var name: String
  /// Screen view, action or generic event.
  public var kind: EventKind
  /// The parameters, in order, with the tracker's default parameters added after the event's own.
  public var parameters: EventParameters
  /// When `track` was called (the client's clock).
  public var timestamp: Date
  /// App, OS, device, locale and library.
  public var context: TrackingContext {
    get { contextBox.value }
    set { contextBox = ContextBox(newValue) }
  }
  /// One shared, immutable box: copying an envelope (once per service) retains one reference
  /// instead of the context's eleven strings.
  private var contextBox: ContextBox
  /// The install's anonymous identifier.
  public var anonymousID: String
  /// The identified user, if ``CoreTracker/identify(userID:)`` was called.
  public var userID: String?
  /// The session the event belongs to.
  public var session: TrackingSession?
  /// The user properties in force when the event was tracked.
  public var userProperties: EventParameters
  /// The services the event goes to.
  public var services: ServiceSelection
  /// Per-service shapes still to be applied by routing; empty once a service receives the event.
  public var payloads: [ServiceID: ServicePayload]
  /// Whether ``name`` and ``parameters`` are the receiving service's own ``ServicePayload`` (set by
  /// ``shaped(for:)``), so a service can tell a feature's own vocabulary from the uniform
  /// serialisation (Firebase turns uniform screen views into `screen_view`, not a feature's `view_item`).
  public var isServicePayload = false
  /// Whether the parameters (uniform and per service) were already scrubbed by the privacy rules:
  /// events replayed from the crash journal, which never holds a personal value in the clear.
  var parametersScrubbed = false

  /// Creates an envelope; trackers and tests build these, features never do.
  public init(
    id: EventID,
    name: String,
    kind: EventKind = .event,
    parameters: EventParameters = EventParameters(),
    timestamp: Date,
    context: TrackingContext = TrackingContext(),
    anonymousID: String = "",
    userID: String? = nil,
    session: TrackingSession? = nil,
    userProperties: EventParameters = EventParameters(),
    services: ServiceSelection = .all,
    payloads: [ServiceID: ServicePayload] = [:]
  ) {
    self.init(
      id: id, name: name, kind: kind, parameters: parameters, timestamp: timestamp, contextBox: ContextBox(context),
      anonymousID: anonymousID, userID: userID, session: session, userProperties: userProperties,
      services: services, payloads: payloads
    )
  }

  /// Creates an envelope sharing an already boxed context (the tracker's hot path).
  init(
    id: EventID, name: String, kind: EventKind, parameters: EventParameters, timestamp: Date,
    contextBox: ContextBox, anonymousID: String, userID: String?, session: TrackingSession?,
    userProperties: EventParameters, services: ServiceSelection, payloads: [ServiceID: ServicePayload]
  ) {
    self.id = id
    self.name = name
    self.kind = kind
    self.parameters = parameters
    self.timestamp = timestamp
    self.contextBox = contextBox
    self.anonymousID = anonymousID
    self.userID = userID
    self.session = session
    self.userProperties = userProperties
    self.services = services
    self.payloads = payloads
  }

  /// The envelope as `service` receives it: its own payload applied (if any), payloads cleared.
  public func shaped(for service: ServiceID) -> TrackedEvent {
    var copy = self
    if let payload = payloads[service] {
      copy.name = payload.name
      copy.parameters = payload.parameters
      copy.isServicePayload = true
    }
    copy.payloads = [:]
    return copy
  }

  /// Applies `transform` to the uniform parameters and to every per-service payload's parameters.
  ///
  /// Stages that rewrite parameters (privacy scrubbing, custom stages) use this, so that no
  /// service's own shape escapes them.
  public mutating func rewriteAllParameters(_ transform: (inout EventParameters) -> Void) {
    transform(&parameters)
    for key in payloads.keys { transform(&payloads[key]!.parameters) }
  }
}

/// A session: a run of events with no gap longer than the tracker's inactivity timeout (30 minutes
/// by default).
public struct TrackingSession: Sendable, Hashable, Codable {
  /// The session's identifier: the Unix time in seconds of its first event (as GA4's `session_id`).
  public var id: Int64
  /// When the session's first event was tracked.
  public var startedAt: Date
  /// 1 for the tracker's first session, 2 for the next, ...
  public var number: Int

  /// Creates a session.
  public init(id: Int64, startedAt: Date, number: Int) {
    self.id = id
    self.startedAt = startedAt
    self.number = number
  }
}

/// An immutable, shared ``TrackingContext`` (compared and hashed by value).
final class ContextBox: Sendable, Hashable {
  let value: TrackingContext
  init(_ value: TrackingContext) { self.value = value }
  static func == (lhs: ContextBox, rhs: ContextBox) -> Bool { lhs === rhs || lhs.value == rhs.value }
  func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
