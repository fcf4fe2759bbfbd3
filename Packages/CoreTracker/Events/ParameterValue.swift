public import Foundation

/// A typed parameter value: string, integer, double, boolean or date, never `Any`.
///
/// Literals convert directly, so parameters read naturally:
///
/// ```swift
/// let parameters: EventParameters = ["product_id": "42", "quantity": 2, "price": 19.99, "gift": false]
/// ```
public enum ParameterValue: Sendable, Hashable {
  /// Text.
  case string(String)
  /// A whole number.
  case int(Int)
  /// A floating-point number.
  case double(Double)
  /// A flag.
  case bool(Bool)
  /// A point in time, serialised as ISO 8601 in UTC where a service needs text.
  case date(Date)

  /// The value as text, the way the uniform serialisation and text-only services render it.
  ///
  /// Doubles use Swift's shortest round-tripping form, dates ISO 8601 in UTC with milliseconds.
  public var text: String {
    switch self {
    case .string(let value): value
    case .int(let value): String(value)
    case .double(let value): String(value)
    case .bool(let value): value ? "true" : "false"
    case .date(let value): ISO8601.string(from: value)
    }
  }
}

extension ParameterValue: ExpressibleByStringLiteral {
  public init(stringLiteral value: String) { self = .string(value) }
}

extension ParameterValue: ExpressibleByIntegerLiteral {
  public init(integerLiteral value: Int) { self = .int(value) }
}

extension ParameterValue: ExpressibleByFloatLiteral {
  public init(floatLiteral value: Double) { self = .double(value) }
}

extension ParameterValue: ExpressibleByBooleanLiteral {
  public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension ParameterValue: CustomStringConvertible {
  public var description: String {
    switch self {
    case .string(let value): "\"\(value)\""
    default: text
    }
  }
}
