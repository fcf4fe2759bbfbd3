public import CollectorWire
import Foundation

/// The time zone a report buckets its days, weeks and hours in (an IANA zone; UTC by default).
///
/// Every engine buckets by the event's local time, `t + offset(t)`: the offset comes from the zone's
/// rules as a `CASE` over the transitions inside the report's range (``localSQL(_:from:to:)``), so a
/// DST day is 23 or 25 hours long and an hour is an hour. The bucket keys go back to UTC here
/// (``start(of:_:)``), one calendar for every engine.
public struct ReportZone: Sendable, Hashable {
  /// The IANA name (`Europe/Istanbul`, `America/New_York`, `UTC`).
  public let identifier: String
  private let zone: TimeZone

  /// UTC.
  public static let utc = ReportZone(zone: TimeZone(identifier: "UTC")!, identifier: "UTC")

  // The name as given: Foundation calls UTC `GMT`.
  private init(zone: TimeZone, identifier: String) {
    self.zone = zone
    self.identifier = identifier
  }

  /// The zone named `identifier` (an IANA name; `UTC` and `GMT` too); throws ``FieldError`` naming
  /// `field` for a name no zone has.
  public init(identifier: String, field: String = "tz") throws(FieldError) {
    // TimeZone also takes abbreviations (`EST`) and offsets (`GMT+3`); a report takes IANA names.
    guard identifier == "UTC" || identifier == "GMT" || identifier.contains("/"),
      let zone = TimeZone(identifier: identifier)
    else {
      throw FieldError(field: field, reason: "\"\(identifier)\" is not an IANA time zone (Europe/Istanbul, UTC)")
    }
    self.init(zone: zone, identifier: identifier)
  }

  /// The zone a `tz` parameter names, or `nil` when it names none (absent or empty); throws
  /// ``FieldError`` for `tz` when it is not an IANA name.
  public static func named(_ parameter: String?) throws(FieldError) -> ReportZone? {
    guard let parameter, !parameter.isEmpty else { return nil }
    return try ReportZone(identifier: parameter)
  }

  /// The zone's offset from UTC at `utc` (ms since 1970), in ms.
  public func offset(at utc: Int64) -> Int64 {
    Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(utc) / 1000))) * 1000
  }

  /// Local time at `utc`: the ms since 1970 a wall clock in the zone shows, read as if it were UTC.
  public func local(_ utc: Int64) -> Int64 { utc + offset(at: utc) }

  /// The UTC time of the local time `local` (a wall-clock time that a spring-forward skips is read
  /// with the offset before the change, so it lands just after the gap).
  public func utc(local: Int64) -> Int64 {
    let guess = local - offset(at: local)
    let settled = local - offset(at: guess)
    return local - offset(at: settled) == settled ? settled : max(guess, settled)
  }

  /// The first instant of the local day `day` (days since 1970-01-01 on the zone's calendar).
  public func start(ofDay day: Int64) -> Int64 { utc(local: day * Self.day) }

  /// The local day (days since 1970-01-01 on the zone's calendar) `utc` falls on.
  public func day(of utc: Int64) -> Int64 { Self.floorDivide(local(utc), Self.day) }

  /// The instant `days` local days before `utc`, at the same wall-clock time.
  public func days(_ days: Int64, before utc: Int64) -> Int64 {
    self.utc(local: local(utc) - days * Self.day)
  }

  /// `utc` as the zone's wall clock with its offset: `2026-11-02T00:00:00+03:00` (`Z` in UTC).
  public func iso(_ utc: Int64) -> String {
    let offset = offset(at: utc)
    let clock = ReportTime.iso(utc + offset).dropLast()
    guard offset != 0 || identifier != "UTC" && identifier != "GMT" else { return clock + "Z" }
    let minutes = abs(offset) / 60_000
    return clock + (offset < 0 ? "-" : "+") + String(format: "%02d:%02d", minutes / 60, minutes % 60)
  }

  /// The offsets inside `from..<to`: the offset before the first transition, then each transition
  /// with the offset from it on (at most one per hour of the range is ever looked at).
  func offsets(from: Int64, to: Int64) -> (first: Int64, changes: [(at: Int64, offset: Int64)]) {
    var changes: [(at: Int64, offset: Int64)] = []
    var cursor = Date(timeIntervalSince1970: Double(from) / 1000)
    while let next = zone.nextDaylightSavingTimeTransition(after: cursor),
      next.timeIntervalSince1970 * 1000 < Double(to)
    {
      let at = Int64((next.timeIntervalSince1970 * 1000).rounded())
      changes.append((at, offset(at: at)))
      cursor = next
    }
    return (offset(at: from), changes)
  }

  /// Whether every offset inside `from..<to` is a whole number of hours: then the hourly rollups,
  /// kept by UTC hour, can answer the zone's days and hours.
  public func keepsWholeHours(from: Int64, to: Int64) -> Bool {
    let (first, changes) = offsets(from: from, to: to)
    return ([first] + changes.map(\.offset)).allSatisfy { $0 % Self.hour == 0 }
  }

  /// The local time of `column` (an SQL expression of ms since 1970) for times inside
  /// `from..<to`, as SQL every engine reads: `column + offset`, the offset a `CASE` over the
  /// range's transitions (none in UTC).
  public func localSQL(_ column: String, from: Int64, to: Int64) -> String {
    let (first, changes) = offsets(from: from, to: to)
    if changes.isEmpty { return first == 0 ? column : "(\(column) + \(first))" }
    var offsets = "CASE"
    var before = first
    for change in changes {
      offsets += " WHEN \(column) < \(change.at) THEN \(before)"
      before = change.offset
    }
    return "(\(column) + \(offsets) ELSE \(before) END)"
  }

  /// The bucket of `column` as SQL (`divide(a, b)` the engine's whole-number division): a day is
  /// its local day number; an hour its first instant (UTC ms) — the hour a fall-back repeats is two
  /// buckets.
  public func bucketSQL(
    _ column: String, _ bucket: ReportBucket, from: Int64, to: Int64, divide: (String, Int64) -> String
  ) -> String {
    let local = localSQL(column, from: from, to: to)
    switch bucket {
    case .hour:
      // The local hour's start, less the same offset: `column - (local mod hour)` (times ≥ 1970).
      return "(\(column) - (\(local) - \(divide(local, Self.hour)) * \(Self.hour)))"
    case .day, .week:
      return divide(local, bucket.milliseconds)
    }
  }

  /// The first instant (UTC ms) of the bucket whose ``bucketSQL(_:_:from:to:divide:)`` key is `key`.
  public func start(of key: Int64, _ bucket: ReportBucket) -> Int64 {
    switch bucket {
    case .hour: key
    case .day: start(ofDay: key)
    case .week: utc(local: key * bucket.milliseconds)
    }
  }

  /// Every bucket that meets `from..<to`, in order: its key (as ``bucketSQL(_:_:from:to:divide:)``
  /// gives it) and its first instant (the first one may start before `from`).
  public func buckets(from: Int64, to: Int64, _ bucket: ReportBucket) -> [(key: Int64, start: Int64)] {
    var found: [(key: Int64, start: Int64)] = []
    switch bucket {
    case .hour:
      var start = from - Self.floorModulo(local(from), Self.hour)
      while start < to {
        found.append((start, start))
        let next = start + Self.hour
        start = next - Self.floorModulo(local(next), Self.hour)
      }
    case .day, .week:
      let size = bucket.milliseconds
      var key = Self.floorDivide(local(from), size)
      while case let start = self.start(of: key, bucket), start < to {
        found.append((key, start))
        key += 1
      }
    }
    return found
  }

  static let hour: Int64 = 3_600_000
  static let day: Int64 = 86_400_000

  static func floorDivide(_ value: Int64, _ size: Int64) -> Int64 {
    value >= 0 ? value / size : -((-value + size - 1) / size)
  }

  static func floorModulo(_ value: Int64, _ size: Int64) -> Int64 { value - floorDivide(value, size) * size }
}
