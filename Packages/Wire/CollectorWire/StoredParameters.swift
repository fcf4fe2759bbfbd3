public import WireJSON

/// An event's stored parameters read back: the JSON object the collector keeps them as, parsed by
/// the collector's own JSON grammar (exact integers, keys in their tracked order). Engines that keep
/// parameters as typed columns beside the JSON (ClickHouse) and report answers read them with this.
public enum StoredParameters {
  /// The object `json` holds, its keys in order; `nil` when it is not a JSON object.
  public static func parse(_ json: String) -> JSONObject? {
    guard let document = try? Parser.document(Array(json.utf8), named: "the parameters"),
      case .object(let object) = document
    else { return nil }
    return object
  }

  /// The parameters of `json` as a report answer carries them: a JSON object in their stored order
  /// (text that is not a JSON object is an empty object).
  public static func reported(_ json: String) -> JSONValue { .object(parse(json) ?? [:]) }
}
