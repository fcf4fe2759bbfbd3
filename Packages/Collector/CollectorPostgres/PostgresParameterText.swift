/// The parameters as they were sent, where PostgreSQL's `jsonb` would give them back otherwise.
///
/// `jsonb` keeps an object's keys in an order of its own (shorter keys first, then bytewise), one
/// value per key, and prints numbers again (`1e3` as `1000`), so the parameters' order, which every
/// engine keeps from `track` to the report API, would be lost on PostgreSQL. The events table keeps
/// the text as sent in `parameters_as_sent` for the events whose `jsonb` would read back otherwise,
/// and `NULL` for the rest (their `jsonb` text is the same value in the same order): reads take
/// `COALESCE(parameters_as_sent, parameters::text)`, and every report that looks into the
/// parameters keeps reading the `jsonb`.
enum PostgresParameterText {
  /// The column beside the JSON column `name` that holds its text as sent.
  static func asSent(_ name: String) -> String { "\(name)_as_sent" }

  /// The JSON column `name` as text, as it was sent.
  static func read(_ name: String) -> String { "COALESCE(\(asSent(name)), \(name)::text) AS \(name)" }

  /// The report text of `value`, one top-level `jsonb` value of the parameters of the events row
  /// `prefix` (`e.`, or `""`) under `key` (an expression), `text` its `jsonb` text: `jsonb` prints
  /// a number again, and the collector stores exponents only for doubles under 10^-4 or at 10^16
  /// and beyond (`1e-05`, `1.2345678901234567e+19`), whose text as sent (``asSent(_:)``, kept
  /// because of the exponent) is read instead (`0.00001` and `12345678901234567000` otherwise).
  /// Every other value's `jsonb` text is its text as sent; the text as sent is parsed only for
  /// numbers of those lengths (measured: Docs/Benchmarks.md, "Numbers named as stored").
  static func value(of prefix: String, value: String, text: String, key: String) -> String {
    let sent = prefix + asSent("parameters")
    // In `jsonb`'s text those are 17 characters or more, or start `0.0000` (a cheaper test than a
    // cast to `numeric`; a longer number parsed again reads the same).
    return "(CASE WHEN \(sent) IS NULL THEN \(text) WHEN jsonb_typeof(\(value)) = 'number' "
      + "AND (length(\(text)) >= 17 OR left(\(text), 6) = '0.0000' OR left(\(text), 7) = '-0.0000') "
      + "THEN \(sent)::json ->> \(key) ELSE \(text) END)"
  }

  /// What the column beside the JSON column holds for `text`: `""` (stored as `NULL`) when `jsonb`
  /// gives it back as it is, the text itself otherwise.
  static func kept(_ text: String) -> String { jsonbKeepsOrder(text) ? "" : text }

  /// Whether `jsonb` reads `text` back as the same value with its keys in the same order: every
  /// object's keys in `jsonb`'s order, no key twice, none with an escape, no number with an
  /// exponent. Text that is not well formed answers `false` (it is kept as sent).
  static func jsonbKeepsOrder(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
      var scan = JSONBOrderScan(bytes: bytes)
      return scan.keepsOrder()
    }
  }
}

/// One pass over JSON text, keeping for each open object where its last key stood.
private struct JSONBOrderScan {
  let bytes: UnsafeBufferPointer<UInt8>
  /// The open containers, innermost last: an object's last key (`nil` before the first) and
  /// whether a key comes next; `nil` for an array.
  private var open: [(last: Range<Int>?, keyNext: Bool)?] = []

  init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  mutating func keepsOrder() -> Bool {
    var index = 0
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "{"): open.append((nil, true))
      case UInt8(ascii: "["): open.append(nil)
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        guard open.popLast() != nil else { return false }
      case UInt8(ascii: ","):
        if case .some(.some(let object)) = open.last { open[open.count - 1] = (object.last, true) }
      case UInt8(ascii: "\""):
        guard let end = stringEnd(from: index), key(from: index + 1, to: end.index, escaped: end.escaped) else {
          return false
        }
        index = end.index
      case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
        // true, false, null: their letters are not a number's exponent.
        while index + 1 < bytes.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[index + 1]) { index += 1 }
      case UInt8(ascii: "e"), UInt8(ascii: "E"):
        return false
      default:
        break
      }
      index += 1
    }
    return open.isEmpty
  }

  /// Where the string opened at `quote` ends (its closing quote) and whether it holds an escape.
  private func stringEnd(from quote: Int) -> (index: Int, escaped: Bool)? {
    var index = quote + 1
    var escaped = false
    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
      if bytes[index] == UInt8(ascii: "\\") {
        escaped = true
        index += 1
      }
      index += 1
    }
    return index < bytes.count ? (index, escaped) : nil
  }

  /// Takes the string from `start` to `end` as the innermost object's next key, if a key comes
  /// next; `false` when `jsonb` would order it otherwise.
  private mutating func key(from start: Int, to end: Int, escaped: Bool) -> Bool {
    guard case .some(.some(let object)) = open.last, object.keyNext else { return true }
    let key = start..<end
    guard !escaped else { return false }
    if let last = object.last {
      let shorter = last.count < key.count
      let sameLength = last.count == key.count
      guard shorter || (sameLength && bytes[last].lexicographicallyPrecedes(bytes[key])) else { return false }
    }
    open[open.count - 1] = (key, false)
    return true
  }
}
