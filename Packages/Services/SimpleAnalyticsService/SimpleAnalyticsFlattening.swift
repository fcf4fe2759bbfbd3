public import CoreTracker

/// How structured parameters reach SimpleAnalytics, whose item parameters are `[String: String]`.
///
/// A scalar keeps its key and its ``ParameterValue/text``. A list or object is flattened into one
/// entry per scalar inside it, its key the path with `.` between steps and list positions counted
/// from 0 (the convention of Segment's and Amplitude's flat destinations):
///
/// ```
/// "items": [["item_id": "SKU-1", "price": 9.99], ["item_id": "SKU-2"]], "tags": ["a", "b"]
/// → "items.0.item_id": "SKU-1", "items.0.price": "9.99", "items.1.item_id": "SKU-2",
///   "tags.0": "a", "tags.1": "b"
/// ```
///
/// An empty list or object is kept as `[]` or `{}`, so its presence is not lost.
public enum SimpleAnalyticsFlattening {
  /// The flat parameters of `parameters`.
  public static func flattened(_ parameters: EventParameters) -> [String: String] {
    var flat: [String: String] = [:]
    for parameter in parameters { add(parameter.value, at: parameter.key, to: &flat) }
    return flat
  }

  private static func add(_ value: ParameterValue, at path: String, to flat: inout [String: String]) {
    switch value {
    case .list(let values) where !values.isEmpty:
      for (position, element) in values.enumerated() { add(element, at: "\(path).\(position)", to: &flat) }
    case .object(let fields) where !fields.isEmpty:
      for field in fields { add(field.value, at: "\(path).\(field.key)", to: &flat) }
    default:
      flat[path] = value.text
    }
  }
}
