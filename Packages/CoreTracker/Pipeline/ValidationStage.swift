/// Validation of names and values: event names (uniform and per service), parameter keys (inside
/// objects too), numbers and the shape of structured values.
///
/// A valid name is 1 to ``maximumNameBytes`` bytes of UTF-8, has no control characters and no
/// leading or trailing white space. A valid value is finite (no NaN or infinity), nests lists and objects at
/// most ``maximumDepth`` levels and holds at most ``maximumElements`` elements per list or object.
/// An event breaking a name rule is dropped as ``DropReason/invalidName`` or
/// ``DropReason/invalidParameter``, one breaking a value rule as ``DropReason/invalidValue``.
/// Vendor rules that are stricter (GA4's 40-character names, 200 items) are the vendor service's to
/// enforce under its `LimitPolicy`; this stage keeps out what no backend can take.
///
/// The defaults are the collector's wire rules (`CollectorLimits` in `CollectorWire`: names of
/// 256 bytes, values 4 deep and 500 wide), so an event this stage keeps is one the collector
/// accepts. `CoreTracker` depends on nothing, so it cannot name that declaration; the collector
/// service's tests fail when the two differ.
public struct ValidationStage: PipelineStage {
  /// The longest valid name or key, in UTF-8 bytes.
  public var maximumNameBytes: Int
  /// The deepest valid nesting of lists and objects (GA4's `items` is 2: a list of objects).
  public var maximumDepth: Int
  /// The most elements one list or object may hold.
  public var maximumElements: Int

  /// Creates a validation stage.
  public init(maximumNameBytes: Int = 256, maximumDepth: Int = 4, maximumElements: Int = 500) {
    self.maximumNameBytes = maximumNameBytes
    self.maximumDepth = maximumDepth
    self.maximumElements = maximumElements
  }

  /// Whether `name` is a valid event name or parameter key.
  public func isValid(_ name: String) -> Bool {
    // Fast path: printable ASCII (spaces only inside) needs no Unicode property look-ups.
    if let valid = Self.asciiVerdict(name.utf8) {
      return valid && name.utf8.count <= maximumNameBytes
    }
    guard name.utf8.count <= maximumNameBytes else { return false }
    guard let first = name.unicodeScalars.first, let last = name.unicodeScalars.last else { return false }
    if first.properties.isWhitespace || last.properties.isWhitespace { return false }
    if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return false }
    return true
  }

  /// The first problem with `value`, or `nil` when it is valid: where it is (relative to the
  /// value, e.g. `[2].price`) and what is wrong.
  public func problem(in value: ParameterValue) -> (path: String, reason: String)? {
    problem(in: value, level: 0)
  }

  private func problem(in value: ParameterValue, level: Int) -> (path: String, reason: String)? {
    switch value {
    case .double(let number):
      return number.isFinite ? nil : ("", "is not a finite number")
    case .list(let values):
      if let shape = shapeProblem(count: values.count, level: level) { return ("", shape) }
      for (position, element) in values.enumerated() {
        if let inner = problem(in: element, level: level + 1) { return ("[\(position)]" + inner.path, inner.reason) }
      }
      return nil
    case .object(let fields):
      if let shape = shapeProblem(count: fields.count, level: level) { return ("", shape) }
      for field in fields {
        guard isValid(field.key) else { return ("." + field.key, "is not a valid key") }
        if let inner = problem(in: field.value, level: level + 1) {
          return ("." + field.key + inner.path, inner.reason)
        }
      }
      return nil
    default:
      return nil
    }
  }

  private func shapeProblem(count: Int, level: Int) -> String? {
    if level >= maximumDepth { return "nests deeper than \(maximumDepth) levels" }
    if count > maximumElements { return "holds more than \(maximumElements) elements" }
    return nil
  }

  /// `true`/`false` for printable ASCII names (true when no space at either end), `nil` when the
  /// name has other bytes and needs the full Unicode check.
  private static func asciiVerdict(_ bytes: String.UTF8View) -> Bool? {
    guard let first = bytes.first, let last = bytes.last else { return false }
    for byte in bytes where byte < 0x20 || byte > 0x7e {
      return byte < 0x20 || byte == 0x7f ? false : nil
    }
    return first != 0x20 && last != 0x20
  }

  public func process(_ event: inout TrackedEvent) -> StageDecision {
    guard isValid(event.name), event.payloads.values.allSatisfy({ isValid($0.name) }) else {
      return .drop(.invalidName)
    }
    let keysValid =
      event.parameters.allSatisfy { isValid($0.key) }
      && event.payloads.values.allSatisfy { $0.parameters.allSatisfy { isValid($0.key) } }
    guard keysValid else { return .drop(.invalidParameter) }
    let valuesValid =
      valuesAreValid(event.parameters) && event.payloads.values.allSatisfy { valuesAreValid($0.parameters) }
    return valuesValid ? .keep : .drop(.invalidValue)
  }

  private func valuesAreValid(_ parameters: EventParameters) -> Bool {
    for parameter in parameters {
      switch parameter.value {
      case .string, .int, .bool, .date: continue
      case .double(let number) where number.isFinite: continue
      default: if problem(in: parameter.value) != nil { return false }
      }
    }
    return true
  }
}
