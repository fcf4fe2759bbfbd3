import CollectorStore
import CollectorWire
import Crypto
import WireJSON

/// Turns a decoded SimpleAnalytics payload into rows, entry by entry.
///
/// Each item becomes an event of kind `action` and each counter a counter total, or, when it breaks
/// a rule, a rejection naming the field. Which id each gets — and so whether it is a resend of
/// something stored or new — is ``SimpleAnalyticsSubmissions``' to decide: entries carry no id.
/// Descriptions and counter names are free text (the client sets no limit): up to
/// ``IngestPolicy/maximumFreeTextBytes``, without NUL. No skew correction: the payload has no send time.
public enum SimpleAnalyticsIngest {
  /// Each item of `payload` by its position: the event (its id still to be given), or why not.
  static func items(
    of payload: DecodedSimpleAnalytics, app: String, receivedAt: Int64, policy: IngestPolicy
  ) -> [Int: Result<StoredEvent, BatchResponse.Rejection>] {
    var outcomes: [Int: Result<StoredEvent, BatchResponse.Rejection>] = [:]
    for rejection in payload.rejected { outcomes[rejection.index] = .failure(rejection) }
    for item in payload.items {
      outcomes[item.index] = event(item, top: payload.context, app: app, receivedAt: receivedAt, policy: policy)
    }
    return outcomes
  }

  /// Each counter of `payload` by its position: the total (its id still to be given), or why not.
  static func counters(
    of payload: DecodedSimpleAnalytics, app: String, receivedAt: Int64, policy: IngestPolicy
  ) -> [Int: Result<StoredCounter, BatchResponse.Rejection>] {
    var outcomes: [Int: Result<StoredCounter, BatchResponse.Rejection>] = [:]
    for rejection in payload.rejectedCounters { outcomes[rejection.index] = .failure(rejection) }
    for entry in payload.counters {
      let path = "counters[\(entry.index)]"
      func reject(_ field: String, _ reason: String) {
        outcomes[entry.index] = .failure(.init(index: entry.index, id: nil, field: field, reason: reason))
      }
      let context = merged(payload.context, entry.context)
      guard FreeText.isValid(entry.name, policy) else {
        reject("\(path).name", FreeText.rule(policy))
        continue
      }
      guard entry.count >= 0 else {
        reject("\(path).count", "is negative")
        continue
      }
      guard let time = ISO8601Timestamp.parse(entry.timestamp) else {
        reject("\(path).timestamp", ISO8601Timestamp.rule)
        continue
      }
      guard context.isBounded else {
        reject(path, "a context value \(EventRules.nameRule)")
        continue
      }
      outcomes[entry.index] = .success(
        StoredCounter(
          app: app, counterID: "", deviceID: context.deviceID, name: entry.name, count: entry.count,
          firstCountedAt: min(time.milliseconds, receivedAt), receivedAt: receivedAt, context: context.stored))
    }
    return outcomes
  }

  /// What identifies a counter across a device's submissions: its device, app, name and the time of
  /// its first count (a resend carries the same time and a larger or equal count).
  static func counterKey(_ payload: DecodedSimpleAnalytics, index: Int, raw: String) -> String {
    guard let entry = payload.counters.first(where: { $0.index == index }) else { return raw }
    let context = merged(payload.context, entry.context)
    return "\(context.deviceID)\u{0}\(context.stored[.appName])\u{0}\(entry.name)\u{0}\(entry.timestamp)"
  }

  private static func event(
    _ item: SimpleAnalyticsEntry, top: [String: String], app: String, receivedAt: Int64, policy: IngestPolicy
  ) -> Result<StoredEvent, BatchResponse.Rejection> {
    let path = "items[\(item.index)]"
    func reject(_ field: String, _ reason: String) -> Result<StoredEvent, BatchResponse.Rejection> {
      .failure(.init(index: item.index, id: nil, field: "\(path).\(field)", reason: reason))
    }
    guard FreeText.isValid(item.name, policy) else { return reject("description", FreeText.rule(policy)) }
    guard let time = ISO8601Timestamp.parse(item.timestamp) else { return reject("timestamp", ISO8601Timestamp.rule) }
    for key in item.parameters.keys where !EventRules.isName(key) {
      return reject("parameters", "a key \(EventRules.nameRule)")
    }
    for (key, value) in item.parameters where value.utf8.contains(0) {
      return reject("parameters.\(key)", EventRules.nulRule)
    }
    let context = merged(top, item.context)
    guard context.isBounded else { return reject("device_id", "a context value \(EventRules.nameRule)") }
    // SimpleAnalytics' metadata is a string map with no order of its own: stored with sorted keys.
    let parameters = EventRules.storedParameters(
      JSONObject(item.parameters.sorted { $0.key < $1.key }.map { JSONField(key: $0.key, value: .string($0.value)) }))
    guard parameters.utf8.count + item.name.utf8.count <= CollectorLimits.maximumEventBytes else {
      return reject("parameters", "the item is larger than \(CollectorLimits.maximumEventBytes) bytes")
    }
    let occurredAt = min(time.milliseconds, receivedAt)
    guard receivedAt - occurredAt <= policy.maximumEventAge else {
      return reject("timestamp", policy.tooOldReason)
    }
    if let problem = policy.planProblem(app: app, name: item.name, parametersJSON: parameters) {
      return reject(problem.field == "name" ? "description" : problem.field, problem.reason)
    }
    return .success(
      StoredEvent(
        app: app, eventID: "", name: item.name, kind: "action", occurredAt: occurredAt,
        utcOffsetMinutes: time.offsetMinutes, receivedAt: receivedAt, deviceID: context.deviceID, userID: nil,
        sessionID: nil, context: context.stored, parametersJSON: parameters
      )
    )
  }

  private struct Context {
    var deviceID: String
    var stored: EventContext
    var isBounded: Bool
  }

  private static func merged(_ top: [String: String], _ entry: [String: String]) -> Context {
    func value(_ key: String) -> String { entry[key] ?? top[key] ?? "" }
    let values = ["device_id", "app_name", "app_version", "system_version", "platform"].map(value)
    let platform = value("platform")
    return Context(
      deviceID: value("device_id"),
      stored: EventContext([
        .appName: value("app_name"), .appVersion: value("app_version"), .osName: platform,
        .osVersion: value("system_version"), .platform: platform, .libraryName: "SimpleAnalytics",
      ]),
      isBounded: values.allSatisfy {
        $0.utf8.count <= CollectorLimits.maximumNameBytes && !CollectorLimits.hasControlCharacter($0)
      }
    )
  }
}

/// Free text where the sending client sets no limit: a SimpleAnalytics description or counter name,
/// at most ``IngestPolicy/maximumFreeTextBytes`` (the `max-text-bytes` setting).
enum FreeText {
  static func rule(_ policy: IngestPolicy) -> String {
    "must be at most \(policy.maximumFreeTextBytes) bytes without U+0000"
  }

  static func isValid(_ text: String, _ policy: IngestPolicy) -> Bool {
    text.utf8.count <= policy.maximumFreeTextBytes && !text.utf8.contains(0)
  }
}

/// An event id derived from content: the first 128 bits of a SHA-256, formatted as a UUID.
public enum ContentID {
  /// The id of `parts` (each part ends with a zero byte, so `["ab", "c"]` and `["a", "bc"]` differ).
  public static func make(_ parts: [String]) -> String {
    var hasher = SHA256()
    for part in parts {
      hasher.update(data: Array(part.utf8))
      hasher.update(data: [0])
    }
    let bytes = Array(hasher.finalize().prefix(16))
    let hex = bytes.map { byte in
      let digits = Array("0123456789abcdef".utf8)
      return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
    }.joined()
    let characters = Array(hex)
    return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
  }
}

/// A strict ISO 8601 date-time: `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM|±HHMM)`, years 1970 to 9999,
/// the date checked (no 30 February). The one reader of the times SimpleAnalytics and Segment send.
public struct ISO8601Timestamp: Hashable, Sendable {
  /// What a time must be, for a refusal.
  public static let rule = "must be an ISO 8601 date-time with an offset, e.g. 2023-03-22T10:15:30-07:00"

  /// Milliseconds since 1970, UTC.
  public var milliseconds: Int64
  /// The offset written in the text, in minutes (0 for `Z`).
  public var offsetMinutes: Int

  /// The time `text` writes, or `nil` when it is not one.
  public static func parse(_ text: String) -> Self? {
    let b = Array(text.utf8)
    var i = 0
    func number(_ count: Int) -> Int? {
      guard i + count <= b.count else { return nil }
      var value = 0
      for _ in 0..<count {
        let digit = Int(b[i]) - 48
        guard (0...9).contains(digit) else { return nil }
        value = value * 10 + digit
        i += 1
      }
      return value
    }
    func expect(_ character: Character) -> Bool {
      guard i < b.count, b[i] == character.asciiValue! else { return false }
      i += 1
      return true
    }
    guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else { return nil }
    guard i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: " ") else { return nil }
    i += 1
    guard let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2) else {
      return nil
    }
    var millisecond = 0
    if i < b.count, b[i] == UInt8(ascii: ".") {
      i += 1
      var digits = 0
      while i < b.count, (48...57).contains(b[i]) {
        if digits < 3 { millisecond = millisecond * 10 + Int(b[i]) - 48 }
        digits += 1
        i += 1
      }
      guard digits > 0 else { return nil }
      if digits < 3 { for _ in digits..<3 { millisecond *= 10 } }
    }
    var offset = 0
    guard i < b.count else { return nil }
    if b[i] == UInt8(ascii: "Z") {
      i += 1
    } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
      let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
      i += 1
      guard let hours = number(2) else { return nil }
      _ = expect(":")
      guard let minutes = number(2), hours <= 18, minutes < 60 else { return nil }
      offset = sign * (hours * 60 + minutes)
    } else {
      return nil
    }
    guard i == b.count, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61,
      (1970...9999).contains(year), day <= daysIn(month: month, year: year)
    else { return nil }
    let days = daysFromCivil(year: year, month: month, day: day)
    let local = ((Int64(days) * 24 + Int64(hour)) * 60 + Int64(minute)) * 60 + Int64(min(second, 59))
    return Self(milliseconds: (local - Int64(offset) * 60) * 1000 + Int64(millisecond), offsetMinutes: offset)
  }

  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// Days since 1970-01-01 (Howard Hinnant's algorithm).
  private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }
}
