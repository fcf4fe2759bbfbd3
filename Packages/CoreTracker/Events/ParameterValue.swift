public import Foundation

/// A typed parameter value, never `Any`: a string, integer, double, boolean or date, or a list or
/// object of such values (GA4's `items`, a cart, Mixpanel list properties).
///
/// Literals convert directly, so parameters read naturally, structured ones included:
///
/// ```swift
/// let parameters: EventParameters = [
///   "product_id": "42", "quantity": 2, "price": 19.99, "gift": false,
///   "tags": ["summer", "sale"],
///   "items": [["item_id": "SKU-1", "price": 9.99, "quantity": 2]],
/// ]
/// ```
///
/// Objects keep their keys in declaration order (an ``EventParameters``), so serialisations and test
/// assertions are stable, and a key inside an object can be declared personal like a top-level one.
/// How deep and how long structures may be is checked by ``ValidationStage``.
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
  /// An ordered list of values.
  case list([ParameterValue])
  /// An object: ordered, unique keys with their values.
  case object(EventParameters)

  /// The value as text, the way the uniform serialisation and text-only services render it.
  ///
  /// Doubles use Swift's shortest round-tripping form, dates ISO 8601 in UTC with milliseconds;
  /// lists and objects are compact JSON (dates inside as ISO 8601 strings, non-finite numbers as
  /// `null`).
  public var text: String {
    switch self {
    case .string(let value): return value
    case .int(let value): return String(value)
    case .double(let value): return String(value)
    case .bool(let value): return value ? "true" : "false"
    case .date(let value): return ISO8601.string(from: value)
    case .list, .object:
      var text = ""
      appendJSON(to: &text)
      return text
    }
  }

  /// Whether this is a list or an object.
  public var isStructured: Bool {
    switch self {
    case .list, .object: true
    default: false
    }
  }

  /// How many levels of lists and objects the value has: 0 for a scalar, 1 for a list of scalars,
  /// 2 for a list of objects of scalars (GA4's `items`).
  public var depth: Int {
    switch self {
    case .list(let values): 1 + (values.lazy.map(\.depth).max() ?? 0)
    case .object(let fields): 1 + (fields.lazy.map(\.value.depth).max() ?? 0)
    default: 0
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

extension ParameterValue: ExpressibleByArrayLiteral {
  /// A list from a literal: `["summer", "sale"]`.
  public init(arrayLiteral elements: ParameterValue...) { self = .list(elements) }
}

extension ParameterValue: ExpressibleByDictionaryLiteral {
  /// An object from a literal, in the literal's order: `["item_id": "SKU-1", "price": 9.99]`.
  public init(dictionaryLiteral elements: (String, ParameterValue)...) {
    self = .object(EventParameters(elements.lazy.map { EventParameter(key: $0.0, value: $0.1) }))
  }
}

extension ParameterValue: CustomStringConvertible {
  public var description: String {
    switch self {
    case .string(let value): "\"\(value)\""
    default: text
    }
  }
}
