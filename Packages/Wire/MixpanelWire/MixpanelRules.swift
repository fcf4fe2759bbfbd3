public import WireJSON

/// The limits of Mixpanel's ingestion API (`/import`, `/track`), as documented (see
/// `wire-formats.md`). One copy for both sides: the Mixpanel service enforces them before sending,
/// the collector's `/import` endpoint rejects with the same rules.
public enum MixpanelLimits {
  /// Events in one request.
  public static let maximumEventsPerRequest = 2000
  /// Bytes of one request body (uncompressed): 10 MB ("413 payload too large": the 10 MB cap and the
  /// 2,000-event cap apply independently).
  public static let maximumRequestBytes = 10_000_000
  /// The shape a body may have, checked before it is decoded: nesting (the native API's 16) and
  /// values (2,000 events of 100 properties; Mixpanel's own limit is 255 properties an event).
  public static let bodyBounds = JSONBounds(maximumDepth: 16, maximumElements: 200_000)
  /// Bytes of one event (strictly less than).
  public static let eventByteLimit = 1024 * 1024
  /// Properties of one event (strictly less than).
  public static let propertyLimit = 255
  /// Characters a string property keeps (longer strings are cut).
  public static let maximumStringLength = 255
  /// Bytes of one list or object property as JSON ("Supported Properties Data Type": 8 KB).
  public static let maximumStructuredPropertyBytes = 8 * 1024
  /// Keys of one object inside a property.
  public static let maximumObjectKeys = 255
  /// Levels of nesting of an object property (a list of objects is 2).
  public static let maximumNestingDepth = 3
  /// Bytes of `$insert_id`.
  public static let maximumInsertIDBytes = 36
  /// The earliest accepted `time`: 1971-01-01T00:00:00Z, in ms.
  public static let earliestTimeMilliseconds: Int64 = 31_536_000_000
  /// How far ahead of the receive time an event may be (ms): one hour.
  public static let maximumFutureMilliseconds: Int64 = 3_600_000
  /// The times `time` may hold at all (ms): 1970-01-01 to 9999-12-31; outside it the time is refused
  /// before any arithmetic.
  public static let validTimeMilliseconds: ClosedRange<Int64> = 0...253_402_300_799_999
}

/// One broken rule of one event, as `failed_records` reports it.
public struct MixpanelViolation: Error, Sendable, Hashable, CustomStringConvertible {
  /// The property or field (`properties.$insert_id`, `event`).
  public var field: String
  /// What is wrong.
  public var message: String

  /// A violation.
  public init(field: String, message: String) {
    self.field = field
    self.message = message
  }

  public var description: String { "\(field): \(message)" }
}

/// The rules as pure functions.
public enum MixpanelRules {
  /// The violation of an `$insert_id`, or `nil`: 1 to 36 bytes of ASCII letters, digits and `-`.
  public static func checkInsertID(_ id: String) -> MixpanelViolation? {
    let bytes = id.utf8
    guard !bytes.isEmpty, bytes.count <= MixpanelLimits.maximumInsertIDBytes else {
      return MixpanelViolation(
        field: "properties.$insert_id", message: "must be 1 to \(MixpanelLimits.maximumInsertIDBytes) bytes"
      )
    }
    let valid = bytes.allSatisfy { byte in
      (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D
    }
    guard valid else {
      return MixpanelViolation(field: "properties.$insert_id", message: "must use letters, digits and - only")
    }
    return isPlaceholder(id)
      ? MixpanelViolation(field: "properties.$insert_id", message: "is a placeholder, not an id") : nil
  }

  /// Values Mixpanel refuses as a `distinct_id` or `$insert_id` because they are an implementation
  /// mistake, not an id (docs.mixpanel.com, "400 Bad Request" and "Server-side events with no
  /// logged-in user"), compared without case. An event without a user sends `""` instead.
  public static let placeholders: Set<String> = [
    "anon", "anonymous", "nil", "none", "null", "n/a", "undefined", "00000000-0000-0000-0000-000000000000",
  ]

  /// Whether `id` is one of the ``placeholders``.
  public static func isPlaceholder(_ id: String) -> Bool {
    id.utf8.count <= 36 && placeholders.contains(id.lowercased())
  }

  /// The violation of a `distinct_id` string, or `nil`.
  public static func checkDistinctID(_ id: String) -> MixpanelViolation? {
    isPlaceholder(id)
      ? MixpanelViolation(
        field: "properties.distinct_id",
        message: "is a placeholder, not a user; send \"\" for an event without a user") : nil
  }

  /// A client's event id made into an `$insert_id`: a UUID without its dashes fits 36 bytes either way;
  /// other characters are dropped and the result cut to 36 bytes.
  public static func insertID(from eventID: String) -> String {
    if checkInsertID(eventID) == nil { return eventID }  // already valid: no copy
    let kept = eventID.unicodeScalars.filter { scalar in
      scalar.isASCII
        && (("0"..."9").contains(scalar) || ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar)
          || scalar == "-")
    }
    return String(String.UnicodeScalarView(kept).prefix(MixpanelLimits.maximumInsertIDBytes))
  }

  /// The violation of an event time (ms) received at `now` (ms), or `nil`.
  public static func checkTime(_ milliseconds: Int64, now: Int64) -> MixpanelViolation? {
    if milliseconds < MixpanelLimits.earliestTimeMilliseconds {
      return MixpanelViolation(field: "properties.time", message: "is before 1971")
    }
    if milliseconds > now + MixpanelLimits.maximumFutureMilliseconds {
      return MixpanelViolation(field: "properties.time", message: "is more than 1 hour in the future")
    }
    return nil
  }

  /// The violation of a property count, or `nil` (fewer than 255).
  public static func checkPropertyCount(_ count: Int) -> MixpanelViolation? {
    guard count >= MixpanelLimits.propertyLimit else { return nil }
    return MixpanelViolation(field: "properties", message: "\(count) properties, fewer than 255 allowed")
  }

  /// A string property as Mixpanel keeps it: cut at 255 characters; `cut` tells whether it was.
  public static func truncated(_ value: String) -> (value: String, cut: Bool) {
    // At most one character per UTF-8 byte: short strings need no counting.
    guard value.utf8.count > MixpanelLimits.maximumStringLength, value.count > MixpanelLimits.maximumStringLength
    else { return (value, false) }
    return (String(value.prefix(MixpanelLimits.maximumStringLength)), true)
  }

  /// Whether a failed request is retried: 429, 502 and 503 (never a 400).
  public static func isRetried(status: Int) -> Bool { [429, 502, 503].contains(status) }
}
