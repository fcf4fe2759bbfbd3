/// A bound on the shape of a JSON document, checked in one pass over its bytes before any decoder
/// sees it: how deep it nests and how many values it holds.
///
/// Decoders built on `JSONDecoder` or `JSONSerialization` spend time and memory on every level and
/// element before a rule can look at them; a small body nested 500 deep, or a gzip body inflating to
/// a million-element list, costs seconds. This scan costs one comparison per byte and allocates
/// nothing, so a body is refused in the time it takes to read it.
///
/// ```swift
/// let bounds = JSONBounds(maximumDepth: 16, maximumElements: 200_000)
/// if let problem = bounds.problem(in: body) { return .badRequest(problem) }   // "nests deeper than 16 levels"
/// ```
///
/// It does not validate JSON: a malformed document within the bounds is left to the decoder.
public struct JSONBounds: Sendable, Hashable {
  /// The deepest nesting of arrays and objects allowed (the document's outer value is level 1).
  public var maximumDepth: Int
  /// The most values and members allowed in the whole document.
  public var maximumElements: Int

  /// A bound.
  public init(maximumDepth: Int, maximumElements: Int) {
    self.maximumDepth = maximumDepth
    self.maximumElements = maximumElements
  }

  /// What is out of bounds in `bytes`, in words, or `nil` when they are within the bounds.
  public func problem(in bytes: some Collection<UInt8>) -> String? {
    var depth = 0
    var elements = 0
    var inString = false
    var escaped = false
    for byte in bytes {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""):
        inString = true
      case UInt8(ascii: "["), UInt8(ascii: "{"):
        depth += 1
        elements += 1
        if depth > maximumDepth { return "nests deeper than \(maximumDepth) levels" }
      case UInt8(ascii: "]"), UInt8(ascii: "}"):
        depth -= 1
      case UInt8(ascii: ","):
        elements += 1
      default:
        continue
      }
      if elements > maximumElements { return "holds more than \(maximumElements) values" }
    }
    return nil
  }
}
