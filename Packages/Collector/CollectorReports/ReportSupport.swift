import CollectorWire
import Foundation

/// Times in reports: milliseconds since 1970, UTC, written as ISO 8601.
public enum ReportTime {
  /// `2026-11-22T10:00:00Z` (whole seconds) for `milliseconds`.
  public static func iso(_ milliseconds: Int64) -> String {
    var time = time_t(milliseconds / 1000 - (milliseconds % 1000 < 0 ? 1 : 0))
    var parts = tm()
    gmtime_r(&time, &parts)
    return String(
      format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
  }

  /// A day (`2026-11-22`, UTC midnight), a time (`2026-11-22T10:00:00Z` or with fractional seconds,
  /// `Z` or an offset from `-14:00` to `+14:00`) or milliseconds since 1970, as milliseconds; `nil`
  /// when it is none of them, names a day or time that does not exist (`2026-02-30`, `24:00`, an
  /// offset of `+25:00`), or lies outside ``valid`` (so every sum and difference of two parsed times
  /// fits in `Int64`).
  public static func parse(_ text: String) -> Int64? {
    let parsed = Int64(text) ?? StrictTime(text)?.milliseconds
    guard let milliseconds = parsed, valid.contains(milliseconds) else { return nil }
    return milliseconds
  }

  /// Whether `text` names a day (`2026-11-22`), which a report reads in its time zone.
  public static func isDay(_ text: String) -> Bool { text.utf8.count == 10 && StrictTime(text) != nil }

  /// The times a report accepts: 1970-01-01 to 9999-12-31 (ms).
  public static let valid = CollectorLimits.validTimes

  /// What ``parse(_:)`` accepts, in words.
  public static let rule =
    "is a day that exists (2026-11-01), an ISO 8601 time (2026-11-01T09:30:00+03:00) or ms since 1970, from 1970 to 9999"

  /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
  static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return Int64(era * 146_097 + dayOfEra - 719_468)
  }
}

/// Versions compared as versions, not as text: `9.0` < `10.0` < `10.0.1` (numeric parts by value,
/// missing parts as 0), a pre-release (`5.12.0-beta`) before its release, and anything that is not a
/// version after all versions, by its text.
public struct SemanticVersion: Comparable, Sendable {
  private let numbers: [Int]
  private let suffix: String
  private let text: String

  /// Parses `text` (anything: what is not a version sorts by its text after the versions).
  public init(_ text: String) {
    self.text = text
    let core = text.prefix { $0 != "-" && $0 != "+" && $0 != " " }
    suffix = String(text.dropFirst(core.count))
    let parts = core.split(separator: ".", omittingEmptySubsequences: false)
    let parsed = parts.map { Int($0) }
    numbers = parsed.allSatisfy { $0 != nil } && !parts.isEmpty ? parsed.map { $0! } : []
  }

  public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
    if lhs.numbers.isEmpty != rhs.numbers.isEmpty { return !lhs.numbers.isEmpty }  // versions first
    if lhs.numbers.isEmpty { return lhs.text < rhs.text }
    for index in 0..<max(lhs.numbers.count, rhs.numbers.count) {
      let left = index < lhs.numbers.count ? lhs.numbers[index] : 0
      let right = index < rhs.numbers.count ? rhs.numbers[index] : 0
      if left != right { return left < right }
    }
    if lhs.suffix.isEmpty != rhs.suffix.isEmpty { return !lhs.suffix.isEmpty }  // 1.0-beta < 1.0
    if lhs.suffix != rhs.suffix { return lhs.suffix < rhs.suffix }
    return lhs.text < rhs.text
  }

  public static func == (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool { lhs.text == rhs.text }
}
