import WireJSON

/// A request cut into its entries, each kept as a request of its own: what the collector's
/// quarantine keeps of an entry it refuses, so that a replay runs it through the same rules.
///
/// ```swift
/// let parts = try RequestEntries(body, arrays: ["items", "counters"])
/// parts.single("items", 2)   // {"device_id":"d1",…,"items":[{…the third item…}],"counters":[]}
/// ```
public struct RequestEntries: Sendable {
  /// The top level's members other than the entry arrays, in order, as JSON text.
  private let members: [(String, String)]
  /// Each entry array's elements, as JSON text.
  private let arrays: [String: [String]]
  private let names: [String]

  /// Cuts `body` (a JSON object) into its members and the elements of the arrays named `arrays`;
  /// `nil` when it is not a JSON object (within the native API's nesting bound).
  public init?(_ body: [UInt8], arrays names: [String]) {
    guard let value = try? Parser.document(body, named: "the body"), case .object(let pairs) = value else { return nil }
    var members: [(String, String)] = []
    var arrays: [String: [String]] = [:]
    for (key, value) in pairs {
      if names.contains(key), case .array(let elements) = value, arrays[key] == nil {
        arrays[key] = elements.map(Self.text)
      } else {
        members.append((key, Self.text(value)))
      }
    }
    self.members = members
    self.arrays = arrays
    self.names = names
  }

  /// The elements of a body that is a JSON array, as JSON text; `nil` when it is not one.
  public static func arrayElements(_ body: [UInt8]) -> [String]? {
    guard let value = try? Parser.document(body, named: "the body"), case .array(let elements) = value else {
      return nil
    }
    return elements.map(text)
  }

  /// The elements of the array `name` (empty when absent), as JSON text.
  public func elements(_ name: String) -> [String] { arrays[name] ?? [] }

  /// The request holding only element `index` of the array `name`: every other member as sent,
  /// the other entry arrays empty.
  public func single(_ name: String, _ index: Int) -> String {
    var json = JSONWriter(capacity: 256)
    json.beginObject()
    for (key, value) in members {
      json.key(key)
      json.raw(Array(value.utf8))
    }
    for array in names {
      json.key(array)
      json.beginArray()
      if array == name, let element = arrays[name]?[index] { json.raw(Array(element.utf8)) }
      json.endArray()
    }
    json.endObject()
    return String(decoding: json.bytes, as: UTF8.self)
  }

  /// `value` as compact JSON text, members in the order sent.
  static func text(_ value: JSONValue) -> String { String(decoding: value.json, as: UTF8.self) }
}

/// Keys given twice in one JSON object: readers disagree on which one wins (Foundation's decoder
/// keeps one, the native parser refuses), so every route refuses what holds one, with the path.
public enum DuplicateKeys {
  /// The paths of the keys given twice in `body` (`events[1].params.value`), in order; empty for a
  /// body without any or one that is not JSON (other rules refuse it).
  public static func paths(in body: [UInt8]) -> [String] {
    guard let value = try? Parser.document(body, named: "the body") else { return [] }
    var found: [String] = []
    walk(value, path: "", into: &found)
    return found
  }

  private static func walk(_ value: JSONValue, path: String, into found: inout [String]) {
    switch value {
    case .array(let elements):
      for (index, element) in elements.enumerated() { walk(element, path: "\(path)[\(index)]", into: &found) }
    case .object(let pairs):
      var seen: Set<String> = []
      for (key, member) in pairs {
        let child = path.isEmpty ? key : "\(path).\(key)"
        if !seen.insert(key).inserted { found.append(child) }
        walk(member, path: child, into: &found)
      }
    default:
      return
    }
  }
}
