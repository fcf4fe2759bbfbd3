public import CollectorWire
import Foundation

/// What a search matches beyond the report filter (app, environment, range, platform, app and OS
/// version, app name): the event's name, its device, its user, any other context field and any of
/// its parameters, each by exact value. The `events` report, `trackerctl export` and the
/// dashboard's search page read it the same way (``init(_:)``).
public struct EventSearch: Sendable, Hashable {
  /// One parameter's value as text (`true`/`false` for booleans, numbers as written).
  public struct ParameterMatch: Sendable, Hashable {
    /// The parameter's key.
    public var key: String
    /// Its value as text.
    public var value: String

    /// A match of `key` to `value`.
    public init(key: String, value: String) {
      self.key = key
      self.value = value
    }
  }

  /// The event's name.
  public var event: String?
  /// The device's anonymous id.
  public var device: String?
  /// The signed-in user's id (the person).
  public var user: String?
  /// Context fields the report filter does not hold (``contextFields``), by value.
  public var context: [ContextField: String] = [:]
  /// Parameters, all of which must match.
  public var parameters: [ParameterMatch] = []

  /// A search for `event` (every event when `nil`).
  public init(event: String? = nil, device: String? = nil, user: String? = nil) {
    self.event = event
    self.device = device
    self.user = user
  }

  /// The context fields a search names by their wire names (`locale=tr_TR`); the others are the
  /// report filter's (`platform`, `appVersion`, `osVersion`, `appName`, `environment`).
  public static let contextFields: [ContextField] = [
    .appBuild, .osName, .deviceModel, .locale, .timeZone, .libraryName, .libraryVersion,
  ]

  /// The search `text` names: `event`, `device`, `user`, each of ``contextFields`` by its wire
  /// name, and `parameters` as `key=value; key=value`. Empty values are left out, but for `event`
  /// (an empty name is an event's name too); a value that is not report text throws ``FieldError``
  /// naming its field.
  public init(_ text: (String) -> String?) throws(FieldError) {
    func value(_ field: String) -> String? { text(field).flatMap { $0.isEmpty ? nil : $0 } }
    event = text("event")  // an empty name is an event's name too
    device = value("device")
    user = value("user")
    for field in Self.contextFields {
      if let match = value(field.rawValue) { context[field] = match }
    }
    parameters = try Self.parameters(value("parameters"))
    try check()
  }

  /// Throws ``FieldError`` naming the first value that is not report text (or, for `event`, not
  /// an event's name).
  public func check() throws(FieldError) {
    if let event { try ReportText.checkName(event, field: "event") }
    if let device { try ReportText.check(device, field: "device") }
    if let user { try ReportText.check(user, field: "user") }
    for (field, value) in context { try ReportText.check(value, field: field.rawValue) }
    for match in parameters {
      try ReportText.check(match.key, field: "parameters")
      try ReportText.check(match.value, field: "parameters")
    }
  }

  /// `key=value; key=value` as matches.
  static func parameters(_ text: String?) throws(FieldError) -> [ParameterMatch] {
    guard let text else { return [] }
    var matches: [ParameterMatch] = []
    for part in text.split(separator: ";") where !part.allSatisfy(\.isWhitespace) {
      let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let key = pieces[0].trimmingCharacters(in: .whitespaces)
      guard pieces.count == 2, !key.isEmpty else {
        throw FieldError(
          field: "parameters", reason: "is key=value pairs separated by ';' (price=129.9; in_stock=true)")
      }
      matches.append(ParameterMatch(key: key, value: pieces[1].trimmingCharacters(in: .whitespaces)))
    }
    guard matches.count <= 10 else { throw FieldError(field: "parameters", reason: "names 10 parameters at most") }
    return matches
  }

  /// The search as query items, in the order ``init(_:)`` reads them (for links and saved searches).
  public var queryItems: [(String, String)] {
    var items: [(String, String)] = []
    if let event { items.append(("event", event)) }
    if let device { items.append(("device", device)) }
    if let user { items.append(("user", user)) }
    for field in Self.contextFields { if let value = context[field] { items.append((field.rawValue, value)) } }
    if !parameters.isEmpty {
      items.append(("parameters", parameters.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")))
    }
    return items
  }

  /// The conditions as column and value pairs on the events table (the parameters apart).
  package var columnMatches: [(column: String, value: String)] {
    var matches: [(String, String)] = []
    if let event { matches.append(("name", event)) }
    if let device { matches.append(("device_id", device)) }
    if let user { matches.append(("user_id", user)) }
    for field in Self.contextFields { if let value = context[field] { matches.append((field.column, value)) } }
    return matches
  }
}
