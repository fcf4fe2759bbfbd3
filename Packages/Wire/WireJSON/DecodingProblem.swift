import Foundation

/// Where and why a `Decodable` body did not decode, in the request's own words: a field path
/// (`events[0].params.x`) and a reason that names JSON kinds (a string, a number, a list), never a
/// Swift type or the decoder's debug text.
public struct DecodingProblem: Sendable, Hashable {
  /// The field path, empty for the body as a whole.
  public let path: String
  /// What is wrong there.
  public let reason: String

  /// The problem `error` (thrown by `JSONDecoder`) describes.
  public init(_ error: any Error) {
    guard let error = error as? DecodingError else {
      self.init(path: "", reason: "is not valid JSON")
      return
    }
    switch error {
    case .typeMismatch(let type, let context):
      self.init(path: Self.path(context.codingPath), reason: "is not \(Self.kind(type))")
    case .valueNotFound(let type, let context):
      self.init(path: Self.path(context.codingPath), reason: "is null where \(Self.kind(type)) is expected")
    case .keyNotFound(let key, let context):
      self.init(path: Self.path(context.codingPath + [key]), reason: "is required")
    case .dataCorrupted(let context) where context.codingPath.isEmpty || context.underlyingError != nil:
      // Foundation says this of text that is not JSON and of a number too large for its field alike.
      self.init(
        path: Self.path(context.codingPath), reason: "is not valid JSON, or holds a number too large for its field")
    case .dataCorrupted(let context):
      // This project's own descriptions pass (written for users); Foundation's name Swift types
      // ("does not fit in Int64", "not representable in Swift") and do not.
      let text = context.debugDescription
      let foreign = ["Swift", "Int", "Double", "Float", "Decimal", "JSON", "Number", "UTF"].contains(
        where: text.contains)
      self.init(
        path: Self.path(context.codingPath), reason: foreign ? "is out of range or not of the kind expected" : text)
    @unknown default:
      self.init(path: "", reason: "is not valid JSON")
    }
  }

  private init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }

  /// `events[0].params.x` for the coding path.
  static func path(_ keys: [any CodingKey]) -> String {
    var path = ""
    for key in keys {
      if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == String(index) {
        path += "[\(index)]"
      } else {
        path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
      }
    }
    return path
  }

  /// The JSON kind a Swift type is read from.
  static func kind(_ type: Any.Type) -> String {
    switch type {
    case is String.Type, is Substring.Type: "a string"
    case is Bool.Type: "true or false"
    case is any BinaryInteger.Type: "a whole number"
    case is any BinaryFloatingPoint.Type, is Decimal.Type: "a number"
    case is [Any].Type: "a list"
    case is [String: Any].Type: "an object"
    default: "the expected kind of value"
    }
  }
}
