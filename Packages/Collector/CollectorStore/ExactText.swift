/// Text compared and hashed by its UTF-8 bytes, as every engine compares stored text.
///
/// Swift's `String` equality is Unicode canonical equivalence: `"caf\u{E9}"` (é as one code point)
/// equals `"cafe\u{301}"` (e and a combining accent). SQLite, PostgreSQL and ClickHouse keep the
/// two apart: two event ids, two devices, two parameter values. A `Set<String>` of such text takes
/// the two for one, so a write that skips the ids it has seen would skip an event no database holds,
/// and a report grouping in the collector would merge what the database's `GROUP BY` keeps apart.
/// Sets and dictionaries of text a client sent are keyed by this instead.
///
/// ```swift
/// let seen: Set<ExactText> = ["caf\u{E9}"]
/// seen.contains(ExactText("cafe\u{301}"))  // false, as the databases see it
/// ```
public struct ExactText: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
  /// The text.
  public let text: String

  /// `text`, compared by its bytes.
  public init(_ text: String) { self.text = text }

  /// A literal's text.
  public init(stringLiteral text: String) { self.text = text }

  public var description: String { text }

  public static func == (lhs: ExactText, rhs: ExactText) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

  /// Byte order, as the databases sort text (`e` + a combining accent before `é` as one code point).
  public static func < (lhs: ExactText, rhs: ExactText) -> Bool { lhs.text.precedesInBytes(rhs.text) }

  public func hash(into hasher: inout Hasher) {
    var text = text
    text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }
}

extension String {
  /// Whether this text and `other` are the same bytes (``ExactText``), as the databases compare them.
  public func hasSameBytes(as other: String) -> Bool { utf8.elementsEqual(other.utf8) }

  /// Whether this text sorts before `other` by its bytes (``ExactText``'s order), as the databases
  /// order text.
  public func precedesInBytes(_ other: String) -> Bool { utf8.lexicographicallyPrecedes(other.utf8) }
}

extension Sequence<String> {
  /// The texts, each distinct byte sequence once, in the order first met (``ExactText``): what
  /// `Set(texts)` would be if it compared as the databases do.
  public func distinctBytes() -> [String] {
    var seen: Set<ExactText> = []
    return filter { seen.insert(ExactText($0)).inserted }
  }
}
