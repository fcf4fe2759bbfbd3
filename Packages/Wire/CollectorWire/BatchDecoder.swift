/// A decoder made for the native batch format: one pass over the bytes, no `Foundation`, and
/// partial success built in.
///
/// Request-level problems (malformed JSON, invalid UTF-8, nesting deeper than
/// ``maximumDepth``, a missing or mistyped `context`, unknown top-level keys) throw a
/// ``BatchDecodingError`` naming the field path and the reason. A problem inside one event (a
/// missing field, a wrong type, an unknown key, a number out of range) rejects that event only:
/// it is listed in ``DecodedBatch/rejected`` with its index, id (when readable), field and reason,
/// and every other event is kept.
///
/// ```swift
/// let batch = try BatchDecoder.decode(body)
/// store(batch.events)
/// respond(BatchResponse(accepted: batch.events.count, rejected: batch.rejected))
/// ```
public enum BatchDecoder {
  /// The deepest nesting accepted anywhere in a body.
  public static let maximumDepth = 16

  /// Decodes a native batch.
  public static func decode(_ bytes: [UInt8]) throws(BatchDecodingError) -> DecodedBatch {
    try Parser.batch(Parser.document(bytes, named: "the batch"))
  }
}

/// A decoded batch: what was valid, and what was rejected.
public struct DecodedBatch: Sendable, Hashable {
  /// The client's send time (ms since 1970), if given.
  public var sentAt: Int64?
  /// The batch's context.
  public var context: CollectorContext
  /// The valid events, in order.
  public var events: [CollectorEvent]
  /// The valid counters.
  public var counters: [CollectorCounter]
  /// The events that were not valid, by index in the request.
  public var rejected: [BatchResponse.Rejection]

  /// A decoded batch (for other decoders and tests).
  public init(
    sentAt: Int64?, context: CollectorContext, events: [CollectorEvent], counters: [CollectorCounter],
    rejected: [BatchResponse.Rejection]
  ) {
    self.sentAt = sentAt
    self.context = context
    self.events = events
    self.counters = counters
    self.rejected = rejected
  }
}

/// Why a batch request as a whole could not be read.
public struct BatchDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The field path, e.g. `context.appName` or `events` (empty for the body itself).
  public var field: String
  /// The reason, in words.
  public var reason: String

  public var description: String { field.isEmpty ? reason : "\(field): \(reason)" }
}

/// A JSON value as the parser keeps it while it checks an event.
enum JSONValue {
  case string(String)
  case int(Int64)
  case double(Double)
  case bool(Bool)
  case null
  case array([JSONValue])
  case object([(String, JSONValue)])

  var typeName: String {
    switch self {
    case .string: "a string"
    case .int, .double: "a number"
    case .bool: "a boolean"
    case .null: "null"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

/// One event's outcome: kept, or rejected with its reason.
enum EventOutcome {
  case valid(CollectorEvent)
  case rejected(BatchResponse.Rejection)
}

struct Parser {
  let bytes: UnsafeBufferPointer<UInt8>
  var position = 0

  init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  var isAtEnd: Bool { position >= bytes.count }

  /// The one JSON value a body holds; anything but white space after it is an error.
  static func document(_ bytes: [UInt8], named name: String) throws(BatchDecodingError) -> JSONValue {
    try bytes.withUnsafeBufferPointer { buffer throws(BatchDecodingError) -> JSONValue in
      var parser = Parser(buffer)
      let top = try parser.value(field: "", depth: 0)
      parser.skipWhitespace()
      guard parser.isAtEnd else { throw BatchDecodingError(field: "", reason: "unexpected data after \(name)") }
      return top
    }
  }

  mutating func skipWhitespace() {
    while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x09, 0x0A, 0x0D: position += 1
      default: return
      }
    }
  }

  /// Where the parser is, below the `field` its caller named: kept as a stack and turned into
  /// text only when a value is rejected (building `events[12].parameters.price` for every value
  /// would cost more than parsing it).
  enum PathComponent {
    case key(String)
    case index(Int)
  }
  var path: [PathComponent] = []

  private func fail(_ field: String, _ reason: String) -> BatchDecodingError {
    var rendered = field
    for component in path {
      switch component {
      case .key(let key): rendered = rendered.isEmpty ? key : "\(rendered).\(key)"
      case .index(let index): rendered += "[\(index)]"
      }
    }
    return BatchDecodingError(field: rendered, reason: reason)
  }

  // MARK: The batch

  static func batch(_ value: JSONValue) throws(BatchDecodingError) -> DecodedBatch {
    func fail(_ field: String, _ reason: String) -> BatchDecodingError {
      BatchDecodingError(field: field, reason: reason)
    }
    guard case .object(let top) = value else { throw fail("", "the body is not a JSON object") }
    var sentAt: Int64?
    var context: CollectorContext?
    var events: [CollectorEvent] = []
    var counters: [CollectorCounter] = []
    var rejected: [BatchResponse.Rejection] = []
    var seen: Set<String> = []
    for (key, value) in top {
      guard seen.insert(key).inserted else { throw fail(key, "appears twice") }
      switch key {
      case "sentAt":
        guard case .int(let milliseconds) = value else { throw fail("sentAt", "must be an integer (ms since 1970)") }
        sentAt = milliseconds
      case "context":
        context = try Self.context(value)
      case "events":
        guard case .array(let items) = value else { throw fail("events", "must be an array") }
        for (index, item) in items.enumerated() {
          switch Self.event(item, index: index) {
          case .valid(let event): events.append(event)
          case .rejected(let rejection): rejected.append(rejection)
          }
        }
      case "counters":
        guard case .array(let items) = value else { throw fail("counters", "must be an array") }
        for (index, item) in items.enumerated() { counters.append(try Self.counter(item, index: index)) }
      default:
        throw fail(key, "is not a field of a batch")
      }
    }
    guard let context else { throw fail("context", "is required") }
    guard seen.contains("events") else { throw fail("events", "is required") }
    return DecodedBatch(sentAt: sentAt, context: context, events: events, counters: counters, rejected: rejected)
  }

  static func context(_ value: JSONValue) throws(BatchDecodingError) -> CollectorContext {
    guard case .object(let pairs) = value else {
      throw BatchDecodingError(field: "context", reason: "must be an object")
    }
    var fields: [String: String] = [:]
    let names = CollectorContext.fieldNames
    for (key, value) in pairs {
      guard names.contains(key) else {
        throw BatchDecodingError(field: "context.\(key)", reason: "is not a context field")
      }
      guard case .string(let text) = value else {
        throw BatchDecodingError(field: "context.\(key)", reason: "must be a string, not \(value.typeName)")
      }
      guard fields.updateValue(text, forKey: key) == nil else {
        throw BatchDecodingError(field: "context.\(key)", reason: "appears twice")
      }
    }
    for name in names where fields[name] == nil {
      throw BatchDecodingError(field: "context.\(name)", reason: "is required")
    }
    guard let context = CollectorContext(fields: fields) else {
      throw BatchDecodingError(field: "context", reason: "is not a valid context")
    }
    return context
  }

  static func event(_ value: JSONValue, index: Int) -> EventOutcome {
    let path = "events[\(index)]"
    guard case .object(let pairs) = value else {
      return .rejected(.init(index: index, id: nil, field: path, reason: "must be an object, not \(value.typeName)"))
    }
    var id: String?
    if let raw = pairs.first(where: { $0.0 == "id" })?.1, case .string(let text) = raw { id = text }
    func reject(_ field: String, _ reason: String) -> EventOutcome {
      .rejected(.init(index: index, id: id, field: "\(path).\(field)", reason: reason))
    }
    var name: String?
    var kind: String?
    var timestamp: Int64?
    var offset = 0
    var parameters: [String: CollectorValue] = [:]
    var anonymousID: String?
    var userID: String?
    var sessionID: Int64?
    // Duplicate keys, tracked without hashing: one bit per known key (unknown keys reject anyway).
    var seen: UInt16 = 0
    for (key, value) in pairs {
      let bit = Self.eventKeyBit(key)
      guard seen & bit == 0 else { return reject(key, "appears twice") }
      seen |= bit
      switch (key, value) {
      case ("id", .string): break
      case ("name", .string(let text)): name = text
      case ("kind", .string(let text)): kind = text
      case ("timestamp", .int(let number)): timestamp = number
      case ("utcOffsetMinutes", .int(let number)):
        guard (-18 * 60...18 * 60).contains(number) else { return reject(key, "must be within ±1080 minutes") }
        offset = Int(number)
      case ("parameters", .object(let entries)):
        for (parameter, entry) in entries {
          // A key given twice is ambiguous (readers disagree on which one wins): the event is refused.
          guard parameters[parameter] == nil else { return reject("parameters.\(parameter)", "appears twice") }
          switch entry {
          case .string(let text): parameters[parameter] = .string(text)
          case .int(let number): parameters[parameter] = .int(number)
          case .double(let number) where number.isFinite: parameters[parameter] = .double(number)
          case .double: return reject("parameters.\(parameter)", "the number is out of range")
          case .bool(let flag): parameters[parameter] = .bool(flag)
          default:
            return reject("parameters.\(parameter)", "must be a string, a number or a boolean, not \(entry.typeName)")
          }
        }
      case ("anonymousId", .string(let text)): anonymousID = text
      case ("userId", .string(let text)): userID = text
      case ("userId", .null): userID = nil
      case ("sessionId", .int(let number)): sessionID = number
      case ("sessionId", .null): sessionID = nil
      case ("id", _), ("name", _), ("kind", _), ("anonymousId", _), ("userId", _):
        return reject(key, "must be a string, not \(value.typeName)")
      case ("timestamp", _), ("utcOffsetMinutes", _), ("sessionId", _):
        return reject(key, "must be an integer, not \(value.typeName)")
      case ("parameters", _):
        return reject(key, "must be an object, not \(value.typeName)")
      default:
        return reject(key, "is not a field of an event")
      }
    }
    guard let id else { return reject("id", "is required") }
    guard let name else { return reject("name", "is required") }
    guard let kind else { return reject("kind", "is required") }
    guard let timestamp else { return reject("timestamp", "is required") }
    guard let anonymousID else { return reject("anonymousId", "is required") }
    return .valid(
      CollectorEvent(
        id: id, name: name, kind: kind, timestamp: timestamp, utcOffsetMinutes: offset, parameters: parameters,
        anonymousId: anonymousID, userId: userID, sessionId: sessionID
      )
    )
  }

  private static func eventKeyBit(_ key: String) -> UInt16 {
    switch key {
    case "id": 1
    case "name": 2
    case "kind": 4
    case "timestamp": 8
    case "utcOffsetMinutes": 16
    case "parameters": 32
    case "anonymousId": 64
    case "userId": 128
    case "sessionId": 256
    default: 0
    }
  }

  static func counter(_ value: JSONValue, index: Int) throws(BatchDecodingError) -> CollectorCounter {
    let path = "counters[\(index)]"
    guard case .object(let pairs) = value else { throw BatchDecodingError(field: path, reason: "must be an object") }
    var name: String?
    var count: Int64?
    var first: Int64?
    var install: String?
    var id: String?
    var seen: Set<String> = []
    for (key, value) in pairs {
      guard seen.insert(key).inserted else {
        throw BatchDecodingError(field: "\(path).\(key)", reason: "appears twice")
      }
      switch (key, value) {
      case ("id", .string(let text)): id = text
      case ("id", .null): id = nil
      case ("anonymousId", .string(let text)): install = text
      case ("anonymousId", .null): install = nil
      case ("name", .string(let text)): name = text
      case ("count", .int(let number)): count = number
      case ("firstCountedAt", .int(let number)): first = number
      default: throw BatchDecodingError(field: "\(path).\(key)", reason: "is not valid here (\(value.typeName))")
      }
    }
    guard let name, let count, let first else {
      throw BatchDecodingError(field: path, reason: "needs name, count and firstCountedAt")
    }
    return CollectorCounter(name: name, count: count, firstCountedAt: first, anonymousId: install, id: id)
  }

  // MARK: JSON

  mutating func value(field: String, depth: Int) throws(BatchDecodingError) -> JSONValue {
    guard depth <= BatchDecoder.maximumDepth else {
      throw fail(field, "nested deeper than \(BatchDecoder.maximumDepth) levels")
    }
    skipWhitespace()
    guard position < bytes.count else { throw fail(field, "the body ends where a value was expected") }
    switch bytes[position] {
    case UInt8(ascii: "{"):
      position += 1
      var pairs: [(String, JSONValue)] = []
      skipWhitespace()
      if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
        position += 1
        return .object(pairs)
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
        pairs.append((key, try value(field: field, depth: depth + 1)))
        path.removeLast()
        skipWhitespace()
        guard position < bytes.count else { throw fail(field, "the body ends inside an object") }
        if bytes[position] == UInt8(ascii: ",") {
          position += 1
        } else if bytes[position] == UInt8(ascii: "}") {
          position += 1
          return .object(pairs)
        } else {
          throw fail(field, "expected ',' or '}' at byte \(position)")
        }
      }
    case UInt8(ascii: "["):
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

  private mutating func literal(_ word: StaticString, field: String) throws(BatchDecodingError) {
    let count = word.utf8CodeUnitCount
    guard position + count <= bytes.count else { throw fail(field, "invalid literal at byte \(position)") }
    for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] {
      throw fail(field, "invalid literal at byte \(position)")
    }
    position += count
  }

  private mutating func number(field: String) throws(BatchDecodingError) -> JSONValue {
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
    if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
      isInteger = false
      position += 1
      let fraction = position
      while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
      guard position > fraction else { throw fail(field, "invalid number at byte \(start)") }
    }
    if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
      isInteger = false
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
    if !isInteger, let exact = Self.exactInteger(text) { return .int(exact) }
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

  private mutating func string(field: String) throws(BatchDecodingError) -> String {
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

  private func unescape(_ raw: UnsafeBufferPointer<UInt8>, field: String) throws(BatchDecodingError) -> String {
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

  private func hex4(_ raw: UnsafeBufferPointer<UInt8>, at index: Int, field: String) throws(BatchDecodingError)
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
