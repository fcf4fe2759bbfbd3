public import WireJSON

/// The limits of the GA4 Measurement Protocol for Firebase app streams, as documented (see
/// `wire-formats.md`). One copy for both sides: the Firebase service enforces them before sending,
/// the collector's `/mp/collect` endpoints reject with the same codes.
public enum GA4Limits {
  /// Events in one request.
  public static let maximumEventsPerRequest = 25
  /// Parameters of one event.
  public static let maximumParametersPerEvent = 25
  /// User properties in one request.
  public static let maximumUserProperties = 25
  /// Characters of an event or parameter name.
  public static let maximumNameLength = 40
  /// Characters of a parameter value.
  public static let maximumParameterValueLength = 100
  /// Characters of a user property name.
  public static let maximumUserPropertyNameLength = 24
  /// Characters of a user property value.
  public static let maximumUserPropertyValueLength = 36
  /// Bytes of a request body (strictly less than).
  public static let requestBodyLimit = 130_000
  /// The shape a body may have, checked before it is decoded: a request nests 6 levels (request,
  /// events, event, params, items, item); 20,000 values is more than a 130 kB body of real events holds.
  public static let bodyBounds = JSONBounds(maximumDepth: 8, maximumElements: 20_000)
  /// Characters of a User-ID.
  public static let maximumUserIDLength = 256
  /// How far in the past an event may be (microseconds): 72 hours.
  public static let maximumAgeMicroseconds: Int64 = 72 * 3_600 * 1_000_000

  /// Prefixes no event, parameter or user property name may start with.
  public static let reservedPrefixes = ["firebase_", "google_", "ga_"]

  /// Event names reserved for app streams.
  public static let reservedEventNames: Set<String> = [
    "ad_activeview", "ad_click", "ad_exposure", "ad_impression", "ad_query", "ad_reward", "adunit_exposure",
    "app_background", "app_clear_data", "app_exception", "app_remove", "app_store_refund",
    "app_store_subscription_cancel", "app_store_subscription_convert", "app_store_subscription_renew",
    "app_update", "app_upgrade", "dynamic_link_app_open", "dynamic_link_app_update", "dynamic_link_first_open",
    "error", "first_open", "first_visit", "in_app_purchase", "notification_dismiss", "notification_foreground",
    "notification_open", "notification_receive", "os_update", "session_start", "session_start_with_rollout",
    "user_engagement",
  ]

  /// Parameter names reserved besides the prefixes.
  public static let reservedParameterNames: Set<String> = ["firebase_conversion"]

  /// User property names reserved besides the prefixes.
  public static let reservedUserPropertyNames: Set<String> = [
    "first_open_time", "first_visit_time", "last_deep_link_referrer", "user_id", "first_open_after_install",
  ]
}

/// The validation endpoint's codes (`validationMessages[].validationCode`).
public enum GA4ValidationCode: String, Sendable, Hashable, Codable, CaseIterable {
  /// A value is not valid (a timestamp outside the window, say).
  case valueInvalid = "VALUE_INVALID"
  /// A required value is missing.
  case valueRequired = "VALUE_REQUIRED"
  /// A name breaks the naming rules.
  case nameInvalid = "NAME_INVALID"
  /// A name is reserved.
  case nameReserved = "NAME_RESERVED"
  /// A value is too long or too large.
  case valueOutOfBounds = "VALUE_OUT_OF_BOUNDS"
  /// Too many events, parameters or user properties.
  case exceededMaxEntities = "EXCEEDED_MAX_ENTITIES"
  /// A name appears twice.
  case nameDuplicated = "NAME_DUPLICATED"
}

/// One broken rule: where, which code, and in words.
public struct GA4Violation: Error, Sendable, Hashable, CustomStringConvertible {
  /// The field path as the validation endpoint writes it (`events[0].params.item_id`).
  public var fieldPath: String
  /// The code.
  public var code: GA4ValidationCode
  /// What is wrong.
  public var message: String

  /// A violation.
  public init(fieldPath: String, code: GA4ValidationCode, message: String) {
    self.fieldPath = fieldPath
    self.code = code
    self.message = message
  }

  public var description: String { "\(fieldPath): \(code.rawValue): \(message)" }
}

/// The rules themselves, as pure functions over names and values.
public enum GA4Rules {
  /// What kind of name is checked (the reserved lists differ).
  public enum NameKind: Sendable, Hashable {
    /// An event name.
    case event
    /// A parameter name.
    case parameter
    /// A user property name.
    case userProperty
  }

  /// The violation of `name` as a `kind` at `path`, or `nil` when it is valid.
  public static func checkName(_ name: String, kind: NameKind, path: @autoclosure () -> String) -> GA4Violation? {
    let limit = kind == .userProperty ? GA4Limits.maximumUserPropertyNameLength : GA4Limits.maximumNameLength
    guard !name.isEmpty else {
      return GA4Violation(fieldPath: path(), code: .valueRequired, message: "the name is empty")
    }
    guard isWellFormed(name) else {
      return GA4Violation(
        fieldPath: path(), code: .nameInvalid,
        message: "\"\(name)\" must use letters, digits and _ only and start with a letter"
      )
    }
    guard name.utf8.count <= limit else {  // well-formed names are ASCII
      return GA4Violation(
        fieldPath: path(), code: .valueOutOfBounds, message: "\"\(name)\" is longer than \(limit) characters"
      )
    }
    if let prefix = GA4Limits.reservedPrefixes.first(where: { name.hasPrefix($0) }) {
      return GA4Violation(
        fieldPath: path(), code: .nameReserved, message: "\"\(name)\" starts with the reserved \(prefix)")
    }
    let reserved: Set<String>
    switch kind {
    case .event: reserved = GA4Limits.reservedEventNames
    case .parameter: reserved = GA4Limits.reservedParameterNames
    case .userProperty: reserved = GA4Limits.reservedUserPropertyNames
    }
    if reserved.contains(name) {
      return GA4Violation(fieldPath: path(), code: .nameReserved, message: "\"\(name)\" is a reserved name")
    }
    return nil
  }

  /// The violation of a string parameter value, or `nil`.
  public static func checkParameterValue(_ value: String, path: @autoclosure () -> String) -> GA4Violation? {
    checkLength(value, atMost: GA4Limits.maximumParameterValueLength, path: path())
  }

  /// The violation of a user property value, or `nil`.
  public static func checkUserPropertyValue(_ value: String, path: @autoclosure () -> String) -> GA4Violation? {
    checkLength(value, atMost: GA4Limits.maximumUserPropertyValueLength, path: path())
  }

  /// `valueOutOfBounds` when `value` has more than `limit` characters.
  private static func checkLength(_ value: String, atMost limit: Int, path: @autoclosure () -> String) -> GA4Violation?
  {
    // At most one character per UTF-8 byte: short strings need no counting.
    guard value.utf8.count > limit, value.count > limit else { return nil }
    return GA4Violation(
      fieldPath: path(), code: .valueOutOfBounds, message: "the value is longer than \(limit) characters")
  }

  /// The violation of an event time (µs) received at `now` (µs), or `nil`: at most 72 hours in the
  /// past, not in the future beyond a minute of clock drift.
  public static func checkTimestamp(_ micros: Int64, now: Int64, path: @autoclosure () -> String) -> GA4Violation? {
    if micros < now - GA4Limits.maximumAgeMicroseconds {
      return GA4Violation(fieldPath: path(), code: .valueInvalid, message: "the time is more than 72 hours in the past")
    }
    if micros > now + 60_000_000 {
      return GA4Violation(fieldPath: path(), code: .valueInvalid, message: "the time is in the future")
    }
    return nil
  }

  /// The violation of a count of entities, or `nil`.
  public static func checkCount(_ count: Int, limit: Int, what: String, path: @autoclosure () -> String)
    -> GA4Violation?
  {
    guard count > limit else { return nil }
    return GA4Violation(fieldPath: path(), code: .exceededMaxEntities, message: "\(count) \(what), at most \(limit)")
  }

  /// Letters, digits and `_`, starting with a letter (ASCII, as GA4 accepts).
  public static func isWellFormed(_ name: String) -> Bool {
    var first = true
    for byte in name.utf8 {
      let isLetter = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
      let isDigit = (0x30...0x39).contains(byte)
      if first {
        guard isLetter else { return false }
        first = false
      } else {
        guard isLetter || isDigit || byte == 0x5F else { return false }
      }
    }
    return !first
  }

  /// A name repaired to the rules: characters outside `[A-Za-z0-9_]` become `_`, a leading
  /// non-letter gets an `e_` prefix, reserved prefixes are replaced by `x_`, it is cut to `limit`
  /// characters, and a reserved name gets an `x_` prefix (`error` → `x_error`). Returns `nil` when
  /// nothing usable is left.
  public static func repairedName(_ name: String, kind: NameKind) -> String? {
    let limit = kind == .userProperty ? GA4Limits.maximumUserPropertyNameLength : GA4Limits.maximumNameLength
    var characters = name.unicodeScalars.map { scalar -> Character in
      scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
        ? Character(scalar) : "_"
    }
    guard !characters.isEmpty, characters.contains(where: { $0 != "_" }) else { return nil }
    if !(characters[0].isLetter) { characters.insert(contentsOf: "e_", at: 0) }
    var repaired = String(characters)
    if let prefix = GA4Limits.reservedPrefixes.first(where: { repaired.hasPrefix($0) }) {
      repaired = "x_" + repaired.dropFirst(prefix.count)
    }
    repaired = String(repaired.prefix(limit))
    if checkName(repaired, kind: kind, path: "")?.code == .nameReserved {
      repaired = String(("x_" + repaired).prefix(limit))
    }
    return checkName(repaired, kind: kind, path: "") == nil ? repaired : nil
  }
}
