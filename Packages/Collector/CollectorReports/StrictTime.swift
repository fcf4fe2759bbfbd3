/// A day or an ISO 8601 time read strictly: every field in its range, the day in its month (leap
/// years included), the offset within ±14:00. Foundation's `ISO8601DateFormatter` rolls
/// `2026-02-30` over to March and takes offsets it should refuse; a report range must name a time
/// that exists.
struct StrictTime {
  /// Milliseconds since 1970 (UTC).
  let milliseconds: Int64

  /// `2026-11-01`, or `2026-11-01T09:30:00` with optional fractional seconds and `Z` or `±hh:mm`.
  init?(_ text: String) {
    let bytes = Array(text.utf8)
    guard bytes.count >= 10, let year = Self.number(bytes, 0, 4), bytes[4] == UInt8(ascii: "-"),
      let month = Self.number(bytes, 5, 2), bytes[7] == UInt8(ascii: "-"), let day = Self.number(bytes, 8, 2),
      (1...12).contains(month), (1...Self.days(inMonth: month, year: year)).contains(day)
    else { return nil }
    let midnight = ReportTime.daysFromCivil(year: year, month: month, day: day) * 86_400_000
    if bytes.count == 10 {
      milliseconds = midnight
      return
    }
    guard let clock = Self.clock(bytes[10...]) else { return nil }
    milliseconds = midnight + clock
  }

  /// `Thh:mm:ss[.fff][Z|±hh:mm]` as milliseconds after the day's UTC midnight.
  private static func clock(_ rest: ArraySlice<UInt8>) -> Int64? {
    let bytes = Array(rest)
    guard bytes.count >= 9, bytes[0] == UInt8(ascii: "T") || bytes[0] == UInt8(ascii: "t"),
      let hour = number(bytes, 1, 2), bytes[3] == UInt8(ascii: ":"), let minute = number(bytes, 4, 2),
      bytes[6] == UInt8(ascii: ":"), let second = number(bytes, 7, 2), hour < 24, minute < 60, second < 60
    else { return nil }
    var index = 9
    var fraction: Int64 = 0
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      let digits = bytes[(index + 1)...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
      guard (1...9).contains(digits.count) else { return nil }
      let padded = Array(digits.prefix(3)) + Array(repeating: UInt8(ascii: "0"), count: max(0, 3 - digits.count))
      fraction = Int64(number(padded, 0, 3) ?? 0)
      index += 1 + digits.count
    }
    guard let offset = offset(Array(bytes[index...])) else { return nil }
    return Int64(hour * 3_600 + minute * 60 + second) * 1000 + fraction - offset
  }

  /// `Z` or `±hh:mm` within ±14:00, as milliseconds east of UTC.
  private static func offset(_ bytes: [UInt8]) -> Int64? {
    if bytes == [UInt8(ascii: "Z")] || bytes == [UInt8(ascii: "z")] { return 0 }
    guard bytes.count == 6, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"),
      let hours = number(bytes, 1, 2), bytes[3] == UInt8(ascii: ":"), let minutes = number(bytes, 4, 2),
      minutes < 60, hours * 60 + minutes <= 14 * 60
    else { return nil }
    let east = Int64(hours * 60 + minutes) * 60_000
    return bytes[0] == UInt8(ascii: "-") ? -east : east
  }

  /// The decimal number of exactly `count` digits at `start`.
  private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
    guard start + count <= bytes.count else { return nil }
    var value = 0
    for byte in bytes[start..<(start + count)] {
      guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
      value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    return value
  }

  /// Days in `month` of `year` (proleptic Gregorian).
  static func days(inMonth month: Int, year: Int) -> Int {
    switch month {
    case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }
}
