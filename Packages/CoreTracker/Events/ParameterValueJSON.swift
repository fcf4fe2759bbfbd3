extension ParameterValue {
  /// Appends the value as compact JSON: the text of a structured value (``text``).
  ///
  /// Strings are escaped per RFC 8259, dates are ISO 8601 strings, non-finite numbers `null`.
  /// Services write their wire formats with their own writers; this is the core's one rendering for
  /// text-only consumers (the log line, SimpleAnalytics values, hashing a personal value).
  func appendJSON(to text: inout String) {
    switch self {
    case .string(let value): Self.appendQuoted(value, to: &text)
    case .int(let value): text += String(value)
    case .double(let value): text += value.isFinite ? String(value) : "null"
    case .bool(let value): text += value ? "true" : "false"
    case .date(let value): Self.appendQuoted(ISO8601.string(from: value), to: &text)
    case .list(let values):
      text += "["
      for (position, value) in values.enumerated() {
        if position > 0 { text += "," }
        value.appendJSON(to: &text)
      }
      text += "]"
    case .object(let fields):
      text += "{"
      for (position, field) in fields.enumerated() {
        if position > 0 { text += "," }
        Self.appendQuoted(field.key, to: &text)
        text += ":"
        field.value.appendJSON(to: &text)
      }
      text += "}"
    }
  }

  private static func appendQuoted(_ value: String, to text: inout String) {
    text += "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          text.unicodeScalars.append(scalar)
        }
      }
    }
    text += "\""
  }
}
