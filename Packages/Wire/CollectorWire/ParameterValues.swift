import WireJSON

/// A typed parameter value on the wire is a ``JSONValue`` other than `null`: JSON's string,
/// integer, floating-point number or boolean, or a list or object of them (nested at most
/// ``CollectorLimits/maximumValueDepth`` levels, each with at most
/// ``CollectorLimits/maximumValueElements`` elements, no key twice). An event's parameters are a
/// ``JSONObject`` of them, in the order the app tracked them.
extension JSONValue {
  /// `nil` when this JSON may be a parameter value, else where (relative to it, e.g. `[2].price`) and why it
  /// cannot be one: `null`, a non-finite number, nesting deeper than
  /// ``CollectorLimits/maximumValueDepth``, more than ``CollectorLimits/maximumValueElements``
  /// elements, or a key given twice.
  func parameterProblem(level: Int = 0) -> ValueProblem? {
    switch self {
    case .string, .int, .bool: return nil
    case .double(let number):
      return number.isFinite ? nil : ValueProblem(path: "", reason: "the number is out of range")
    case .null:
      return ValueProblem(path: "", reason: "must be a string, a number, a boolean, a list or an object, not null")
    case .array(let elements):
      if let problem = Self.shapeProblem(count: elements.count, level: level) { return problem }
      for (position, element) in elements.enumerated() {
        if let problem = element.parameterProblem(level: level + 1) { return problem.inside("[\(position)]") }
      }
      return nil
    case .object(let object):
      if let problem = Self.shapeProblem(count: object.count, level: level) { return problem }
      var seen = Set<String>()
      for (key, entry) in object {
        guard seen.insert(key).inserted else { return ValueProblem(path: "." + key, reason: "appears twice") }
        if let problem = entry.parameterProblem(level: level + 1) { return problem.inside("." + key) }
      }
      return nil
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
