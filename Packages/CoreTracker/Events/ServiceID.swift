/// Names one service a tracker sends to, e.g. `log`, `collector`, `firebase`.
///
/// Identifiers are open: a service module declares its own in an extension, and a product tracker
/// re-publishes the ones it injects, so adding a vendor never touches CoreTracker.
///
/// ```swift
/// extension ServiceID {
///   public static let firebase = ServiceID("firebase")
/// }
/// ```
public struct ServiceID: RawRepresentable, Sendable, Hashable, Codable, Comparable {
  /// The identifier's text.
  public var rawValue: String

  /// Creates an identifier.
  public init(rawValue: String) { self.rawValue = rawValue }

  /// Creates an identifier.
  public init(_ rawValue: String) { self.rawValue = rawValue }

  public static func < (lhs: ServiceID, rhs: ServiceID) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension ServiceID: CustomStringConvertible {
  public var description: String { rawValue }
}

/// The services an event goes to: all of them (the default), only some, or all but some.
///
/// An array literal means "only these":
///
/// ```swift
/// var services: ServiceSelection { [TYService.firebase, TYService.log] }
/// ```
public enum ServiceSelection: Sendable, Hashable {
  /// Every service of the tracker.
  case all
  /// Only the named services.
  case only(Set<ServiceID>)
  /// Every service but the named ones.
  case allExcept(Set<ServiceID>)

  /// Whether `service` is selected.
  @inlinable
  public func contains(_ service: ServiceID) -> Bool {
    switch self {
    case .all: true
    case .only(let services): services.contains(service)
    case .allExcept(let services): !services.contains(service)
    }
  }
}

extension ServiceSelection: ExpressibleByArrayLiteral {
  public init(arrayLiteral elements: ServiceID...) { self = .only(Set(elements)) }
}
