/// The one way a value reaches ClickHouse SQL text.
///
/// ClickHouse 18.16, the version Debian ships, has no bound query parameters, so every value a
/// query holds is written into its text. Only ``literal(_:)-(String)`` and the integer and double
/// overloads do that; identifiers (database names) are checked by ``isValidIdentifier(_:)`` and
/// never escaped. Rows themselves are never written into SQL: inserts send `JSONEachRow` bodies.
///
/// The SQL this module writes is the subset that ClickHouse 18.16 and current releases share: no
/// query parameters (`{name:Type}`), no `DateTime64`, no `JSONExtract*` (`visitParamExtract*`
/// instead), no window functions, no CTEs (`WITH … AS` subqueries), no `TTL`, no positional
/// `ORDER BY 1`, and no `LowCardinality` (it needs a setting on 18.16). Times are `Int64`
/// milliseconds since 1970 (UTC), with a `Date` column derived from them for partitions and keys.
public enum ClickHouseSQL {
  /// `text` as a single-quoted ClickHouse string literal: the quote and the backslash escaped, and
  /// every control character (and DEL) written as `\xHH`, so no text can end the literal, and the
  /// literal reads back byte for byte.
  public static func literal(_ text: String) -> String {
    var out = "'"
    out.reserveCapacity(text.utf8.count + 2)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "'": out += "\\'"
      case "\\": out += "\\\\"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        let hex = String(scalar.value, radix: 16, uppercase: true)
        out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "'"
  }

  /// An integer literal.
  public static func literal(_ value: Int64) -> String {
    // `-9223372036854775808` would parse as the negation of a number too large for Int64.
    value == .min ? "toInt64('-9223372036854775808')" : String(value)
  }

  /// A list of string literals for `IN (…)`; `('')`-free: an empty list is `(NULL)`, which matches
  /// nothing.
  public static func list(_ texts: some Sequence<String>) -> String {
    let items = texts.map(literal)
    return items.isEmpty ? "(NULL)" : "(" + items.joined(separator: ", ") + ")"
  }

  /// A list of integer literals for `IN (…)` (hashes, days), in ascending order; an empty list is
  /// `(NULL)`, which matches nothing.
  public static func list<Number: BinaryInteger>(_ numbers: some Sequence<Number>) -> String {
    let items = numbers.sorted().map { String($0) }
    return items.isEmpty ? "(NULL)" : "(" + items.joined(separator: ", ") + ")"
  }

  /// Whether `name` can be a database or table name written into SQL as is: 1–63 characters,
  /// lowercase ASCII letters, digits and `_`, not starting with a digit.
  public static func isValidIdentifier(_ name: String) -> Bool {
    guard let first = name.utf8.first, name.utf8.count <= 63 else { return false }
    let isLetter = { (byte: UInt8) in
      byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }
    return isLetter(first)
      && name.utf8.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
  }
}
