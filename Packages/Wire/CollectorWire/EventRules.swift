import WireJSON

/// The rules of one native event, declared once: the collector quarantines an event that breaks
/// one, naming the field. The tracker's `ValidationStage` defaults to the same numbers (a test
/// fails when they differ), so what the pipeline keeps the collector accepts; `CollectorService`
/// does not drop on the device what these rules refuse, so that a refused event is kept, with its
/// reason, where it can be replayed. Times are the collector's to check: they need its clock.
public enum EventRules {
  /// What a name, kind, key or counter name must be.
  public static let nameRule = "must be 1 to \(CollectorLimits.maximumNameBytes) bytes without control characters"
  /// What every identifying text must not hold.
  public static let controlRule = "must not contain control characters (U+0000 to U+001F, U+007F)"
  /// What no stored string may hold (PostgreSQL cannot keep it).
  public static let nulRule = "must not contain U+0000 (NUL)"
  /// What every time from outside must be.
  public static let timeRule = "must be ms since 1970, from 1970-01-01 to 9999-12-31"

  /// 1 to 256 bytes, no control character: event names, kinds, keys, counter names.
  public static func isName(_ text: String) -> Bool {
    let count = text.utf8.count
    return count > 0 && count <= CollectorLimits.maximumNameBytes && !CollectorLimits.hasControlCharacter(text)
  }

  /// The first rule `event` breaks, its field relative to the event (`name`, `parameters.items[0].price`),
  /// or `nil`. Its size is ``sizeProblem(of:stored:)``'s to check (the collector measures its stored
  /// form; a client its own record, which is never smaller).
  public static func problem(in event: CollectorEvent) -> FieldError? {
    guard !event.id.isEmpty, event.id.count <= CollectorLimits.maximumIdentifierLength,
      !CollectorLimits.hasControlCharacter(event.id)
    else {
      return FieldError(
        field: "id",
        reason: "must be 1 to \(CollectorLimits.maximumIdentifierLength) characters without control characters")
    }
    guard isName(event.name) else { return FieldError(field: "name", reason: nameRule) }
    guard isName(event.kind) else { return FieldError(field: "kind", reason: nameRule) }
    guard !event.anonymousId.isEmpty, event.anonymousId.utf8.count <= CollectorLimits.maximumNameBytes,
      !CollectorLimits.hasControlCharacter(event.anonymousId)
    else {
      return FieldError(
        field: "anonymousId",
        reason: "must be 1 to \(CollectorLimits.maximumNameBytes) bytes without control characters")
    }
    if let user = event.userId,
      user.utf8.count > CollectorLimits.maximumNameBytes || CollectorLimits.hasControlCharacter(user)
    {
      return FieldError(
        field: "userId", reason: "must be at most \(CollectorLimits.maximumNameBytes) bytes without control characters")
    }
    return parameterProblem(in: event)
  }

  private static func parameterProblem(in event: CollectorEvent) -> FieldError? {
    // Nearly every event's parameters are fine: checked in their order first, and only when one is
    // not are they checked again in key order, so the problem named is the same for any order.
    let fine = event.parameters.fields.allSatisfy { isName($0.key) && problem(in: $0.value) == nil }
    for key in fine ? [] : event.parameters.keys.sorted() {
      guard isName(key) else { return FieldError(field: "parameters", reason: "a key \(nameRule)") }
      if let problem = problem(in: event.parameters[key]!) {
        return FieldError(field: "parameters.\(key)" + problem.path, reason: problem.reason)
      }
    }
    if let problem = CommerceRules.problem(event: event.name, parameters: event.parameters) {
      return FieldError(field: problem.path, reason: problem.reason)
    }
    return nil
  }

  /// Whether `event`, with its parameters stored as `stored` (``storedParameters(_:)``), is over
  /// ``CollectorLimits/maximumEventBytes``.
  public static func sizeProblem(of event: CollectorEvent, stored: String) -> FieldError? {
    let size = stored.utf8.count + event.name.utf8.count + event.id.utf8.count + event.anonymousId.utf8.count
    guard size <= CollectorLimits.maximumEventBytes else {
      return FieldError(
        field: "parameters", reason: "the event is larger than \(CollectorLimits.maximumEventBytes) bytes")
    }
    return nil
  }

  /// Where inside `value` (relative to it) a string holds NUL or an object key breaks ``nameRule``,
  /// or `nil`: what the stores cannot keep or reports cannot name.
  public static func problem(in value: JSONValue) -> (path: String, reason: String)? {
    switch value {
    case .string(let text):
      return text.utf8.contains(0) ? ("", nulRule) : nil
    case .int, .double, .bool, .null:
      return nil
    case .array(let values):
      for (position, element) in values.enumerated() {
        if let inner = problem(in: element) { return ("[\(position)]" + inner.path, inner.reason) }
      }
      return nil
    case .object(let fields):
      for (key, field) in fields {
        guard isName(key) else { return ("", "a key \(nameRule)") }
        if let inner = problem(in: field) { return ("." + key + inner.path, inner.reason) }
      }
      return nil
    }
  }

  /// Parameters as the collector stores them: a JSON object with its keys in the tracked order.
  public static func storedParameters(_ parameters: JSONObject) -> String {
    var json = JSONWriter(capacity: 64 + parameters.count * 32)
    JSONValue.object(parameters).write(to: &json)
    return String(decoding: json.bytes, as: UTF8.self)
  }
}
