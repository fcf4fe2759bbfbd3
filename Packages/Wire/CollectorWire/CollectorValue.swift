public import WireJSON

/// A typed parameter value on the wire: JSON's string, integer, floating-point number or boolean,
/// or a list or object of them (nested at most ``CollectorLimits/maximumValueDepth`` levels, each
/// with at most ``CollectorLimits/maximumValueElements`` elements).
public enum CollectorValue: Codable, Sendable, Hashable {
  case string(String)
  case int(Int64)
  case double(Double)
  case bool(Bool)
  /// A list, e.g. `"tags": ["summer", "sale"]`.
  case list([CollectorValue])
  /// An object, e.g. one element of `items`.
  case object([String: CollectorValue])

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .int(value)
    } else if let value = try? container.decode(Double.self) {
      self = .double(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([CollectorValue].self) {
      self = .list(value)
    } else if let value = try? container.decode([String: CollectorValue].self) {
      self = .object(value)
    } else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "a parameter value is a string, a number, a boolean, a list or an object"
      )
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .string(let value): try container.encode(value)
    case .int(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .bool(let value): try container.encode(value)
    case .list(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }
}

extension CollectorValue {
  /// Writes the value as JSON; object keys sorted, so equal values write equal bytes.
  public func write(to json: inout JSONWriter) {
    switch self {
    case .string(let value): json.string(value)
    case .int(let value): json.int(value)
    case .double(let value): json.double(value)
    case .bool(let value): json.bool(value)
    case .list(let values):
      json.beginArray()
      for value in values { value.write(to: &json) }
      json.endArray()
    case .object(let fields):
      json.beginObject()
      for key in fields.keys.sorted() {
        json.key(key)
        fields[key]!.write(to: &json)
      }
      json.endObject()
    }
  }
}

extension JSONValue {
  /// The parameter value this JSON holds, or where (relative to it, e.g. `[2].price`) and why it
  /// cannot be one: `null`, a non-finite number, nesting deeper than
  /// ``CollectorLimits/maximumValueDepth``, more than ``CollectorLimits/maximumValueElements``
  /// elements, or a key given twice.
  func parameterValue(level: Int = 0) -> Result<CollectorValue, ValueProblem> {
    switch self {
    case .string(let text): return .success(.string(text))
    case .int(let number): return .success(.int(number))
    case .double(let number) where number.isFinite: return .success(.double(number))
    case .double: return .failure(ValueProblem(path: "", reason: "the number is out of range"))
    case .bool(let flag): return .success(.bool(flag))
    case .null:
      return .failure(
        ValueProblem(path: "", reason: "must be a string, a number, a boolean, a list or an object, not null"))
    case .array(let elements):
      if let problem = Self.shapeProblem(count: elements.count, level: level) { return .failure(problem) }
      var values: [CollectorValue] = []
      values.reserveCapacity(elements.count)
      for (position, element) in elements.enumerated() {
        switch element.parameterValue(level: level + 1) {
        case .success(let value): values.append(value)
        case .failure(let problem): return .failure(problem.inside("[\(position)]"))
        }
      }
      return .success(.list(values))
    case .object(let entries):
      if let problem = Self.shapeProblem(count: entries.count, level: level) { return .failure(problem) }
      var fields: [String: CollectorValue] = [:]
      for (key, entry) in entries {
        guard fields[key] == nil else { return .failure(ValueProblem(path: "." + key, reason: "appears twice")) }
        switch entry.parameterValue(level: level + 1) {
        case .success(let value): fields[key] = value
        case .failure(let problem): return .failure(problem.inside("." + key))
        }
      }
      return .success(.object(fields))
    }
  }

  private static func shapeProblem(count: Int, level: Int) -> ValueProblem? {
    if level >= CollectorLimits.maximumValueDepth {
      return ValueProblem(path: "", reason: "nests deeper than \(CollectorLimits.maximumValueDepth) levels")
    }
    if count > CollectorLimits.maximumValueElements {
      return ValueProblem(path: "", reason: "holds more than \(CollectorLimits.maximumValueElements) elements")
    }
    return nil
  }
}

/// Where inside a value it breaks a rule (`[2].price`, relative to the value) and why.
struct ValueProblem: Error {
  var path: String
  var reason: String

  func inside(_ step: String) -> ValueProblem { ValueProblem(path: step + path, reason: reason) }
}
