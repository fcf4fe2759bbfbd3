/// Decodes the SimpleAnalytics payload exactly as its client sends it, with the same parser,
/// limits and partial success as ``BatchDecoder``.
///
/// The five context keys are accepted at the top level and inside each item and counter (per entry
/// wins, as the SimpleAnalytics README shows them there). A bad item or counter is rejected alone
/// (`items[3].timestamp: is required`); a body that is not a payload at all throws.
public enum SimpleAnalyticsDecoder {
  /// Decodes a payload.
  public static func decode(_ bytes: [UInt8]) throws(FieldError) -> DecodedSimpleAnalytics {
    try payload(Parser.document(bytes, named: "the payload"))
  }

  private static let contextKeys: Set<String> = ["device_id", "app_name", "app_version", "system_version", "platform"]

  private static func payload(_ value: JSONValue) throws(FieldError) -> DecodedSimpleAnalytics {
    guard case .object(let pairs) = value else {
      throw FieldError(field: "", reason: "the body is not a JSON object")
    }
    var result = DecodedSimpleAnalytics()
    var seen: Set<String> = []
    var sawItems = false
    for (key, value) in pairs {
      guard seen.insert(key).inserted else { throw FieldError(field: key, reason: "appears twice") }
      if contextKeys.contains(key) {
        switch value {
        case .string(let text): result.context[key] = text
        case .null: break
        default: throw FieldError(field: key, reason: "must be a string, not \(value.typeName)")
        }
        continue
      }
      switch key {
      case "items":
        sawItems = true
        guard case .array(let items) = value else {
          throw FieldError(field: "items", reason: "must be an array")
        }
        for (index, item) in items.enumerated() {
          switch entry(item, path: "items[\(index)]", isItem: true) {
          case .success(let entry): result.items.append(entry.with(index: index))
          case .failure(let rejection): result.rejected.append(rejection.with(index: index))
          }
        }
      case "counters":
        guard case .array(let counters) = value else {
          throw FieldError(field: "counters", reason: "must be an array")
        }
        for (index, counter) in counters.enumerated() {
          switch entry(counter, path: "counters[\(index)]", isItem: false) {
          case .success(let entry): result.counters.append(entry.with(index: index))
          case .failure(let rejection): result.rejectedCounters.append(rejection.with(index: index))
          }
        }
      default:
        throw FieldError(field: key, reason: "is not a field of a SimpleAnalytics payload")
      }
    }
    guard sawItems else { throw FieldError(field: "items", reason: "is required") }
    return result
  }

  private static func entry(_ value: JSONValue, path: String, isItem: Bool) -> Result<
    SimpleAnalyticsEntry, BatchResponse.Rejection
  > {
    func reject(_ field: String, _ reason: String) -> Result<SimpleAnalyticsEntry, BatchResponse.Rejection> {
      .failure(.init(index: 0, id: nil, field: field.isEmpty ? path : "\(path).\(field)", reason: reason))
    }
    guard case .object(let pairs) = value else { return reject("", "must be an object, not \(value.typeName)") }
    var entry = SimpleAnalyticsEntry()
    var seen: Set<String> = []
    var hasName = false
    var hasCount = false
    var hasTimestamp = false
    let nameKey = isItem ? "description" : "name"
    for (key, value) in pairs {
      guard seen.insert(key).inserted else { return reject(key, "appears twice") }
      switch (key, value) {
      case (nameKey, .string(let text)):
        entry.name = text
        hasName = true
      case ("timestamp", .string(let text)):
        entry.timestamp = text
        hasTimestamp = true
      case ("count", .int(let number)) where !isItem:
        entry.count = number
        hasCount = true
      case ("parameters", .object(let parameters)) where isItem:
        for (name, parameter) in parameters {
          guard case .string(let text) = parameter else {
            return reject("parameters.\(name)", "must be a string, not \(parameter.typeName)")
          }
          guard entry.parameters.updateValue(text, forKey: name) == nil else {
            return reject("parameters.\(name)", "appears twice")
          }
        }
      case ("parameters", .null) where isItem: break
      case (let key, .string(let text)) where contextKeys.contains(key): entry.context[key] = text
      case (let key, .null) where contextKeys.contains(key): break
      case ("count", _): return reject(key, "must be an integer, not \(value.typeName)")
      case ("parameters", _): return reject(key, "must be an object of strings, not \(value.typeName)")
      case (nameKey, _), ("timestamp", _): return reject(key, "must be a string, not \(value.typeName)")
      case (let key, _) where contextKeys.contains(key): return reject(key, "must be a string, not \(value.typeName)")
      default: return reject(key, "is not a field of \(isItem ? "an item" : "a counter")")
      }
    }
    guard hasName else { return reject(nameKey, "is required") }
    guard hasTimestamp else { return reject("timestamp", "is required") }
    guard isItem || hasCount else { return reject("count", "is required") }
    return .success(entry)
  }
}

/// A decoded SimpleAnalytics payload: valid entries and rejections.
public struct DecodedSimpleAnalytics: Sendable, Hashable {
  /// The top-level context keys present (`device_id`, `app_name`, `app_version`, `system_version`, `platform`).
  public var context: [String: String] = [:]
  /// The valid items.
  public var items: [SimpleAnalyticsEntry] = []
  /// The valid counters.
  public var counters: [SimpleAnalyticsEntry] = []
  /// Items that were not valid, by index in `items`.
  public var rejected: [BatchResponse.Rejection] = []
  /// Counters that were not valid, by index in `counters`.
  public var rejectedCounters: [BatchResponse.Rejection] = []
}

/// One item (`description`, `parameters`) or counter (`name`, `count`) with its own context keys.
public struct SimpleAnalyticsEntry: Sendable, Hashable {
  /// The position in its array.
  public var index = 0
  /// The item's description or the counter's name.
  public var name = ""
  /// The ISO 8601 timestamp as sent.
  public var timestamp = ""
  /// The counter's count (0 for items).
  public var count: Int64 = 0
  /// The item's parameters.
  public var parameters: [String: String] = [:]
  /// Context keys given on this entry (they win over the top level).
  public var context: [String: String] = [:]

  func with(index: Int) -> Self {
    var copy = self
    copy.index = index
    return copy
  }
}

extension BatchResponse.Rejection {
  func with(index: Int) -> Self {
    var copy = self
    copy.index = index
    return copy
  }
}
