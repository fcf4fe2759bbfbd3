/// The native batch's rules over parsed JSON: the top level, the context, each event (rejected
/// alone when it breaks a rule) and each counter.
extension Parser {
  static func batch(_ value: JSONValue) throws(FieldError) -> DecodedBatch {
    func fail(_ field: String, _ reason: String) -> FieldError {
      FieldError(field: field, reason: reason)
    }
    guard case .object(let top) = value else { throw fail("", "the body is not a JSON object") }
    var sentAt: Int64?
    var context: EventContext?
    var events: [CollectorEvent] = []
    var counters: [CollectorCounter] = []
    var rejected: [BatchResponse.Rejection] = []
    var diagnostics: [CollectorDropReport] = []
    var refusedDiagnostics: [FieldError] = []
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
      case "diagnostics":
        guard case .array(let items) = value else { throw fail("diagnostics", "must be an array") }
        for (index, item) in items.enumerated() {
          do throws(FieldError) {
            diagnostics.append(try Self.dropReport(item, index: index))
          } catch {
            refusedDiagnostics.append(error)
          }
        }
      default:
        throw fail(key, "is not a field of a batch")
      }
    }
    guard let context else { throw fail("context", "is required") }
    guard seen.contains("events") else { throw fail("events", "is required") }
    var batch = DecodedBatch(sentAt: sentAt, context: context, events: events, counters: counters, rejected: rejected)
    batch.diagnostics = diagnostics
    batch.refusedDiagnostics = refusedDiagnostics
    return batch
  }

  /// The batch's context: every field a string, none unknown or twice, none missing but those
  /// `optional` allows (``ContextField/addedLater``).
  static func context(_ value: JSONValue, optional: Set<ContextField> = ContextField.addedLater) throws(FieldError)
    -> EventContext
  {
    guard case .object(let pairs) = value else {
      throw FieldError(field: "context", reason: "must be an object")
    }
    var context = EventContext()
    var seen: Set<ContextField> = []
    for (key, value) in pairs {
      guard let field = ContextField(rawValue: key) else {
        throw FieldError(field: "context.\(key)", reason: "is not a context field")
      }
      guard case .string(let text) = value else {
        throw FieldError(field: "context.\(key)", reason: "must be a string, not \(value.typeName)")
      }
      guard seen.insert(field).inserted else {
        throw FieldError(field: "context.\(key)", reason: "appears twice")
      }
      context[field] = text
    }
    for field in ContextField.allCases where !seen.contains(field) && !optional.contains(field) {
      throw FieldError(field: "context.\(field.rawValue)", reason: "is required")
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
    var parameters = JSONObject()
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
      case ("parameters", .object):
        if let problem = readParameters(value, into: &parameters) { return reject(problem.field, problem.reason) }
      case ("anonymousId", .string(let text)): anonymousID = text
      case ("userId", .string(let text)): userID = text
      case ("userId", .null): userID = nil
      case ("sessionId", .int(let number)): sessionID = number
      case ("sessionId", .null): sessionID = nil
      default:
        return reject(key, Self.wrongField(key, value))
      }
    }
    guard let id, let name, let kind, let timestamp, let anonymousID else {
      let present = [
        ("id", id != nil), ("name", name != nil), ("kind", kind != nil), ("timestamp", timestamp != nil),
        ("anonymousId", anonymousID != nil),
      ]
      return reject(present.first { !$0.1 }?.0 ?? "id", "is required")
    }
    return .valid(
      CollectorEvent(
        id: id, name: name, kind: kind, timestamp: timestamp, utcOffsetMinutes: offset, parameters: parameters,
        anonymousId: anonymousID, userId: userID, sessionId: sessionID))
  }

  /// Why an event's field is refused: a known field of the wrong type, or an unknown one.
  private static func wrongField(_ key: String, _ value: JSONValue) -> String {
    switch key {
    case "id", "name", "kind", "anonymousId", "userId": "must be a string, not \(value.typeName)"
    case "timestamp", "utcOffsetMinutes", "sessionId": "must be an integer, not \(value.typeName)"
    case "parameters": "must be an object, not \(value.typeName)"
    default: "is not a field of an event"
    }
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

  static func counter(_ value: JSONValue, index: Int) throws(FieldError) -> CollectorCounter {
    let path = "counters[\(index)]"
    guard case .object(let pairs) = value else { throw FieldError(field: path, reason: "must be an object") }
    var name: String?
    var count: Int64?
    var first: Int64?
    var install: String?
    var id: String?
    var seen: Set<String> = []
    for (key, value) in pairs {
      guard seen.insert(key).inserted else {
        throw FieldError(field: "\(path).\(key)", reason: "appears twice")
      }
      switch (key, value) {
      case ("id", .string(let text)): id = text
      case ("id", .null): id = nil
      case ("anonymousId", .string(let text)): install = text
      case ("anonymousId", .null): install = nil
      case ("name", .string(let text)): name = text
      case ("count", .int(let number)): count = number
      case ("firstCountedAt", .int(let number)): first = number
      default: throw FieldError(field: "\(path).\(key)", reason: "is not valid here (\(value.typeName))")
      }
    }
    guard let name, let count, let first else {
      throw FieldError(field: path, reason: "needs name, count and firstCountedAt")
    }
    return CollectorCounter(name: name, count: count, firstCountedAt: first, anonymousId: install, id: id)
  }
}

/// Reads an event's parameters (an `.object`) into `parameters`; the first bad one is returned
/// as the field and the reason that reject the event.
private func readParameters(
  _ object: JSONValue, into parameters: inout JSONObject
) -> (field: String, reason: String)? {
  guard case .object(let entries) = object else { return ("parameters", "must be an object") }
  // Hashed, not scanned: an event of thousands of tiny parameters costs linear time.
  var seen = Set<String>(minimumCapacity: entries.count)
  for (parameter, entry) in entries {
    // Built only when the parameter is refused: a string per parameter would cost an allocation.
    func field() -> String { "parameters." + parameter }
    // A key given twice is ambiguous (readers disagree on which one wins): the event is refused.
    guard seen.insert(parameter).inserted else { return (field(), "appears twice") }
    switch entry {
    case .string, .int, .bool: break
    default:
      if let problem = entry.parameterProblem() { return (field() + problem.path, problem.reason) }
    }
    // The shape of `items` is checked here, while decoding; its signs against the event's name (a
    // refund's prices may be negative) with the other commerce rules (`CommerceRules`) at ingest.
    if parameter == "items", let problem = CommerceRules.problem(inItems: entry, refund: true) {
      return (field() + problem.path, problem.reason)
    }
  }
  parameters = entries  // in the order sent
  return nil
}

extension EventContext {
  /// The context of a batch's `context` object in `json`, with `optional` the fields it may leave
  /// out (the batch decoder passes ``ContextField/addedLater``).
  package init(json: [UInt8], optional: Set<ContextField>) throws(FieldError) {
    self = try Parser.context(Parser.document(json, named: "the context"), optional: optional)
  }
}
