/// The JSON grammar (RFC 8259) in one pass over the bytes: values, exact numbers, strings with
/// their escapes, UTF-8 validation, bounded nesting.
extension Parser {
  mutating func value(field: String, depth: Int) throws(FieldError) -> JSONValue {
    guard depth <= BatchDecoder.maximumDepth else {
      throw fail(field, "nested deeper than \(BatchDecoder.maximumDepth) levels")
    }
    skipWhitespace()
    guard position < bytes.count else { throw fail(field, "the body ends where a value was expected") }
    switch bytes[position] {
    case UInt8(ascii: "{"):
      return try object(field: field, depth: depth)
    case UInt8(ascii: "["):
      return try array(field: field, depth: depth)
    case UInt8(ascii: "\""):
      return .string(try string(field: field))
    case UInt8(ascii: "t"):
      try literal("true", field: field)
      return .bool(true)
    case UInt8(ascii: "f"):
      try literal("false", field: field)
      return .bool(false)
    case UInt8(ascii: "n"):
      try literal("null", field: field)
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return try number(field: field)
    default:
      throw fail(field, "unexpected character at byte \(position)")
    }
  }

  /// An object, from its `{` (keys in order, duplicates kept for the rules to refuse).
  mutating func object(field: String, depth: Int) throws(FieldError) -> JSONValue {
    position += 1
    var fields: [JSONField] = []
    skipWhitespace()
    if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
      position += 1
      return .object(JSONObject(fields))
    }
    while true {
      skipWhitespace()
      guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
        throw fail(field, "expected a key at byte \(position)")
      }
      let key = try string(field: field)
      skipWhitespace()
      guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
        throw fail(field, "expected ':' at byte \(position)")
      }
      position += 1
      path.append(.key(key))
      fields.append(JSONField(key: key, value: try value(field: field, depth: depth + 1)))
      path.removeLast()
      skipWhitespace()
      guard position < bytes.count else { throw fail(field, "the body ends inside an object") }
      if bytes[position] == UInt8(ascii: ",") {
        position += 1
      } else if bytes[position] == UInt8(ascii: "}") {
        position += 1
        return .object(JSONObject(fields))
      } else {
        throw fail(field, "expected ',' or '}' at byte \(position)")
      }
    }
  }

  /// An array, from its `[`.
  mutating func array(field: String, depth: Int) throws(FieldError) -> JSONValue {
    position += 1
    var values: [JSONValue] = []
    skipWhitespace()
    if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
      position += 1
      return .array(values)
    }
    while true {
      path.append(.index(values.count))
      values.append(try value(field: field, depth: depth + 1))
      path.removeLast()
      skipWhitespace()
      guard position < bytes.count else { throw fail(field, "the body ends inside an array") }
      if bytes[position] == UInt8(ascii: ",") {
        position += 1
      } else if bytes[position] == UInt8(ascii: "]") {
        position += 1
        return .array(values)
      } else {
        throw fail(field, "expected ',' or ']' at byte \(position)")
      }
    }
  }

  private mutating func literal(_ word: StaticString, field: String) throws(FieldError) {
    let count = word.utf8CodeUnitCount
    guard position + count <= bytes.count else { throw fail(field, "invalid literal at byte \(position)") }
    for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] {
      throw fail(field, "invalid literal at byte \(position)")
    }
    position += count
  }

  private mutating func number(field: String) throws(FieldError) -> JSONValue {
    let start = position
    var negative = false
    if bytes[position] == UInt8(ascii: "-") {
      negative = true
      position += 1
    }
    let digitsStart = position
    var magnitude: UInt64 = 0
    var overflow = false
    while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
      let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
      let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
      overflow = overflow || o1 || o2
      magnitude = sum
      position += 1
    }
    let digits = position - digitsStart
    guard digits > 0 else { throw fail(field, "invalid number at byte \(start)") }
    if digits > 1 && bytes[digitsStart] == UInt8(ascii: "0") {
      throw fail(field, "a number has a leading zero at byte \(start)")
    }
    // Digits after the point and the exponent are kept so an integral value written with a fraction
    // or an exponent ("5.0", "34314401013E8") is read exactly, as Foundation reads it, not via a double.
    var isInteger = true
    // Without an exponent, a fraction with a digit other than 0 ("129.9") is no integer: read as a
    // double at once (the exact check works on text, and prices are in most commerce events).
    var integral = true
    if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
      isInteger = false
      position += 1
      let fraction = position
      while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
        integral = integral && bytes[position] == UInt8(ascii: "0")
        position += 1
      }
      guard position > fraction else { throw fail(field, "invalid number at byte \(start)") }
    }
    if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
      isInteger = false
      integral = true
      position += 1
      if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
        position += 1
      }
      let exponent = position
      while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
      guard position > exponent else { throw fail(field, "invalid number at byte \(start)") }
    }
    if isInteger, !overflow, magnitude <= (negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)) {
      return .int(negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude))
    }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    if !isInteger, integral, let exact = Self.exactInteger(text) { return .int(exact) }
    // Beyond 64 bits, or not integral: a double (as Foundation reads it). Past Double's range it is
    // ±infinity, which every field's own rule refuses, so one such number rejects its event alone.
    guard let number = Double(text) else { throw fail(field, "invalid number at byte \(start)") }
    return .double(number)
  }

  /// The exact value of a number written with a fraction or an exponent when it is an integer that
  /// fits in 64 bits ("5.0", "-1.5e1", "34314401013E8"); nil otherwise.
  static func exactInteger(_ text: String) -> Int64? {
    var mantissa = Substring(text)
    var exponent = 0
    if let e = mantissa.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      guard let value = Int(mantissa[mantissa.index(after: e)...]) else { return nil }
      exponent = value
      mantissa = mantissa[..<e]
    }
    let negative = mantissa.hasPrefix("-")
    if negative { mantissa = mantissa.dropFirst() }
    var digits = Substring(mantissa.filter { $0 != "." })
    if let point = mantissa.firstIndex(of: ".") {
      exponent -= mantissa.distance(from: point, to: mantissa.endIndex) - 1
    }
    while let first = digits.first, first == "0", digits.count > 1 { digits = digits.dropFirst() }
    while exponent < 0, let last = digits.last, last == "0", digits.count > 1 {
      digits = digits.dropLast()
      exponent += 1
    }
    if digits == "0" { return 0 }
    guard exponent >= 0, digits.count + exponent <= 19 else { return nil }
    var magnitude: UInt64 = 0
    for digit in digits.utf8 {
      let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
      let (sum, o2) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
      guard !o1, !o2 else { return nil }
      magnitude = sum
    }
    for _ in 0..<exponent {
      let (times10, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
      guard !overflowed else { return nil }
      magnitude = times10
    }
    guard magnitude <= (negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)) else { return nil }
    return negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude)
  }

  mutating func string(field: String) throws(FieldError) -> String {
    position += 1  // the opening quote
    let start = position
    var plain = true
    while position < bytes.count {
      let byte = bytes[position]
      if byte == UInt8(ascii: "\"") { break }
      if byte == UInt8(ascii: "\\") {
        plain = false
        position += 2
        continue
      }
      if byte < 0x20 { throw fail(field, "a control character inside a string at byte \(position)") }
      position += 1
    }
    guard position < bytes.count else { throw fail(field, "a string is not closed") }
    let raw = UnsafeBufferPointer(rebasing: bytes[start..<position])
    position += 1  // the closing quote
    guard Self.isValidUTF8(raw) else { throw fail(field, "invalid UTF-8") }
    if plain { return String(decoding: raw, as: UTF8.self) }
    return try unescape(raw, field: field)
  }

  private func unescape(_ raw: UnsafeBufferPointer<UInt8>, field: String) throws(FieldError) -> String {
    var scalars = String.UnicodeScalarView()
    var index = 0
    var utf8: [UInt8] = []
    func flush() {
      if !utf8.isEmpty {
        scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
        utf8.removeAll(keepingCapacity: true)
      }
    }
    while index < raw.count {
      let byte = raw[index]
      guard byte == UInt8(ascii: "\\") else {
        utf8.append(byte)
        index += 1
        continue
      }
      flush()
      guard index + 1 < raw.count else { throw fail(field, "a string ends in an escape") }
      let escaped = raw[index + 1]
      index += 2
      switch escaped {
      case UInt8(ascii: "\""): scalars.append("\"")
      case UInt8(ascii: "\\"): scalars.append("\\")
      case UInt8(ascii: "/"): scalars.append("/")
      case UInt8(ascii: "b"): scalars.append("\u{08}")
      case UInt8(ascii: "f"): scalars.append("\u{0C}")
      case UInt8(ascii: "n"): scalars.append("\n")
      case UInt8(ascii: "r"): scalars.append("\r")
      case UInt8(ascii: "t"): scalars.append("\t")
      case UInt8(ascii: "u"):
        var code = try hex4(raw, at: index, field: field)
        index += 4
        if (0xD800..<0xDC00).contains(code) {
          guard index + 6 <= raw.count, raw[index] == UInt8(ascii: "\\"), raw[index + 1] == UInt8(ascii: "u") else {
            throw fail(field, "an unpaired surrogate in a string")
          }
          let low = try hex4(raw, at: index + 2, field: field)
          guard (0xDC00..<0xE000).contains(low) else { throw fail(field, "an unpaired surrogate in a string") }
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
          index += 6
        }
        guard let scalar = Unicode.Scalar(code) else { throw fail(field, "an unpaired surrogate in a string") }
        scalars.append(scalar)
      default:
        throw fail(field, "an invalid escape in a string")
      }
    }
    flush()
    return String(scalars)
  }

  private func hex4(_ raw: UnsafeBufferPointer<UInt8>, at index: Int, field: String) throws(FieldError)
    -> UInt32
  {
    guard index + 4 <= raw.count else { throw fail(field, "an invalid \\u escape") }
    var value: UInt32 = 0
    for offset in 0..<4 {
      let byte = raw[index + offset]
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw fail(field, "an invalid \\u escape")
      }
      value = value << 4 | UInt32(digit)
    }
    return value
  }

  /// Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF); ASCII runs are fast.
  static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var index = 0
    let count = bytes.count
    while index < count {
      let lead = bytes[index]
      if lead < 0x80 {
        index += 1
        continue
      }
      let length: Int
      var minimum: UInt32
      var scalar: UInt32
      switch lead {
      case 0xC2...0xDF: (length, minimum, scalar) = (2, 0x80, UInt32(lead & 0x1F))
      case 0xE0...0xEF: (length, minimum, scalar) = (3, 0x800, UInt32(lead & 0x0F))
      case 0xF0...0xF4: (length, minimum, scalar) = (4, 0x10000, UInt32(lead & 0x07))
      default: return false
      }
      guard index + length <= count else { return false }
      for offset in 1..<length {
        let byte = bytes[index + offset]
        guard byte & 0xC0 == 0x80 else { return false }
        scalar = scalar << 6 | UInt32(byte & 0x3F)
      }
      guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return false }
      minimum = 0
      index += length
    }
    return true
  }
}
