public import Foundation

/// ISO 8601 rendering without `DateFormatter`: allocation-light, `Sendable`, the same on every platform.
public enum ISO8601 {
  /// `2026-11-21T10:15:30.123Z`: UTC with milliseconds.
  public static func string(from date: Date) -> String {
    string(from: date, offsetSeconds: 0)
  }

  /// The date in local time at `offsetSeconds` from UTC, with that offset:
  /// `2023-03-22T10:15:30.000-07:00` (`Z` for zero).
  public static func string(from date: Date, offsetSeconds: Int) -> String {
    let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded()) + Int64(offsetSeconds) * 1000
    let (days, msOfDay) = totalMilliseconds.floorDivided(by: 86_400_000)
    let (year, month, day) = civil(fromDays: days)
    let seconds = msOfDay / 1000
    var text = ""
    text.reserveCapacity(29)
    text += pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    text += "T" + pad(seconds / 3600, 2) + ":" + pad(seconds / 60 % 60, 2) + ":" + pad(seconds % 60, 2)
    text += "." + pad(msOfDay % 1000, 3)
    if offsetSeconds == 0 {
      text += "Z"
    } else {
      let minutes = abs(offsetSeconds) / 60
      text += (offsetSeconds < 0 ? "-" : "+") + pad(Int64(minutes / 60), 2) + ":" + pad(Int64(minutes % 60), 2)
    }
    return text
  }

  private static func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  /// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
  private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}

extension Int64 {
  fileprivate func floorDivided(by divisor: Int64) -> (Int64, Int64) {
    let quotient = self >= 0 ? self / divisor : (self - divisor + 1) / divisor
    return (quotient, self - quotient * divisor)
  }
}
