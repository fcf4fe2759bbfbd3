/// An event a feature tracks.
///
/// Declare events as enums (or structs) in the feature, so that changing an event breaks its call
/// sites at compile time. The core serialises every event the same way (``name`` + ``parameters``)
/// before any service sees it; an event can give one service its own shape with
/// ``payload(for:)``, without importing that service's module.
///
/// ```swift
/// enum ProductDetailEvent: CoreTrackable {
///   case viewed(productID: String)
///   case liked(productID: String, userID: String)
///
///   var name: String {
///     switch self {
///     case .viewed: "product_detail"
///     case .liked: "product_liked"
///     }
///   }
///   var kind: EventKind {
///     switch self {
///     case .viewed: .screenView
///     case .liked: .action
///     }
///   }
///   var parameters: EventParameters {
///     switch self {
///     case .viewed(let id): ["product_id": .string(id)]
///     case .liked(let id, _): ["product_id": .string(id)]
///     }
///   }
///   func payload(for service: ServiceID) -> ServicePayload? {
///     switch (self, service) {
///     case (.liked(let id, let user), TYService.firebase):
///       ServicePayload(name: "select_content", parameters: [
///         "item_id": .string("product-\(id)-user-\(user)"), "item_name": "product-like",
///       ])
///     default: nil  // every other service gets the uniform serialisation
///     }
///   }
/// }
/// ```
public protocol CoreTrackable: Sendable {
  /// The event's name in the uniform serialisation, e.g. `add_to_cart`.
  var name: String { get }
  /// Screen view, action or generic event. Defaults to ``EventKind/event``.
  var kind: EventKind { get }
  /// The event's typed parameters, in order. Defaults to none.
  var parameters: EventParameters { get }
  /// The services the event goes to. Defaults to ``ServiceSelection/all``.
  var services: ServiceSelection { get }
  /// Whether the event measures a duration started with ``CoreTracker/startTimer(for:)``. Defaults
  /// to `false`. A timed event tracked without a started timer goes without `duration_ms` and is
  /// counted in `TrackerStats.untimed`; any event whose name has a started timer gets the duration.
  var isTimed: Bool { get }
  /// The event as `service` should receive it, or `nil` for the uniform serialisation.
  ///
  /// Never makes an event vanish: an event without a payload for a service is sent to it as
  /// ``name`` + ``parameters``. To keep an event away from a service, use ``services``.
  func payload(for service: ServiceID) -> ServicePayload?
}

extension CoreTrackable {
  public var kind: EventKind { .event }
  public var parameters: EventParameters { EventParameters() }
  public var services: ServiceSelection { .all }
  public var isTimed: Bool { false }
  public func payload(for service: ServiceID) -> ServicePayload? { nil }
}

/// One service's own shape of an event: its name and parameters for that service only.
public struct ServicePayload: Sendable, Hashable {
  /// The event name the service receives.
  public var name: String
  /// The parameters the service receives, in order.
  public var parameters: EventParameters

  /// Creates a payload.
  public init(name: String, parameters: EventParameters = EventParameters()) {
    self.name = name
    self.parameters = parameters
  }
}

/// An event assembled at run time, for code that has no enum case for it (bridges, tools, demos).
///
/// Prefer enums in features: a ``GenericEvent`` gives up the compile-time check of call sites.
public struct GenericEvent: CoreTrackable, Hashable {
  public var name: String
  public var kind: EventKind
  public var parameters: EventParameters
  public var services: ServiceSelection
  /// Per-service payloads; services without an entry get the uniform serialisation.
  public var payloads: [ServiceID: ServicePayload]

  /// Creates an event.
  public init(
    _ name: String,
    kind: EventKind = .event,
    parameters: EventParameters = EventParameters(),
    services: ServiceSelection = .all,
    payloads: [ServiceID: ServicePayload] = [:]
  ) {
    self.name = name
    self.kind = kind
    self.parameters = parameters
    self.services = services
    self.payloads = payloads
  }

  public func payload(for service: ServiceID) -> ServicePayload? { payloads[service] }
}
