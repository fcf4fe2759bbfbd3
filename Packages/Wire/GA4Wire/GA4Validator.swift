/// Every documented rule over a whole request, with the validation endpoint's field paths and codes.
///
/// The collector's `/debug/mp/collect` answers exactly these; `/mp/collect` stores the events without
/// any and drops the others. The Firebase service applies the same rules (``GA4Rules``) one event at a
/// time before it sends, so a request it writes has none.
public enum GA4Validator {
  /// The result of checking a request: request-level violations (which void the whole request) and
  /// per-event violations by event index.
  public struct Report: Sendable, Hashable {
    /// Violations that make the whole request unusable (missing app instance, too many events, ...).
    public var request: [GA4Violation] = []
    /// Violations of single events, by index in `events`.
    public var events: [Int: [GA4Violation]] = [:]

    /// Every violation, request-level first, then by event index.
    public var all: [GA4Violation] {
      request + events.keys.sorted().flatMap { events[$0]! }
    }

    /// Whether nothing is wrong.
    public var isValid: Bool { request.isEmpty && events.isEmpty }
  }

  /// Checks `request` (of `bodyBytes` bytes on the wire) received at `nowMicros`.
  public static func validate(_ request: GA4Request, bodyBytes: Int, nowMicros: Int64) -> Report {
    var report = Report()
    if bodyBytes >= GA4Limits.requestBodyLimit {
      report.request.append(
        GA4Violation(
          fieldPath: "", code: .valueOutOfBounds,
          message: "the body is \(bodyBytes) bytes; it must be under \(GA4Limits.requestBodyLimit)"
        )
      )
    }
    let device = (request.appInstanceID ?? "").isEmpty ? "client_id" : "app_instance_id"
    if let id = request.device {
      if id.unicodeScalars.contains(where: { $0.value < 0x20 }) {
        report.request.append(
          GA4Violation(fieldPath: device, code: .valueInvalid, message: "must not contain control characters"))
      }
    } else {
      report.request.append(
        GA4Violation(
          fieldPath: "app_instance_id", code: .valueRequired,
          message: "is required for app streams (client_id for web streams)"))
    }
    if let userID = request.userID, userID.unicodeScalars.contains(where: { $0.value < 0x20 }) {
      report.request.append(
        GA4Violation(fieldPath: "user_id", code: .valueInvalid, message: "must not contain control characters"))
    }
    if let userID = request.userID, userID.count > GA4Limits.maximumUserIDLength {
      report.request.append(
        GA4Violation(
          fieldPath: "user_id", code: .valueOutOfBounds,
          message: "is longer than \(GA4Limits.maximumUserIDLength) characters"
        )
      )
    }
    if request.events.isEmpty {
      report.request.append(GA4Violation(fieldPath: "events", code: .valueRequired, message: "at least one event"))
    }
    if let violation = GA4Rules.checkCount(
      request.events.count, limit: GA4Limits.maximumEventsPerRequest, what: "events", path: "events"
    ) {
      report.request.append(violation)
    }
    report.request += userPropertyViolations(request.userProperties)
    report.request += consentViolations(request.consent)
    for (index, event) in request.events.enumerated() {
      let violations = eventViolations(
        event, at: index, requestMicros: request.timestampMicros, nowMicros: nowMicros
      )
      if !violations.isEmpty { report.events[index] = violations }
    }
    return report
  }

  /// The violations of the event at `index` of `events`.
  public static func eventViolations(
    _ event: GA4Event, at index: Int, requestMicros: Int64?, nowMicros: Int64
  ) -> [GA4Violation] {
    let path = "events[\(index)]"
    var violations: [GA4Violation] = []
    if var violation = GA4Rules.checkName(event.name, kind: .event, path: "events") {
      // Google names the list and the index, as its own example `_badEventName` shows.
      violation.message = "event at index [\(index)] has invalid name [\(event.name)]: \(violation.message)"
      violations.append(violation)
    }
    if let violation = GA4Rules.checkCount(
      event.params.count, limit: GA4Limits.maximumParametersPerEvent, what: "parameters", path: "\(path).params"
    ) {
      violations.append(violation)
    }
    for (name, value) in event.params.sorted(by: { $0.key < $1.key }) {
      let parameterPath = "\(path).params.\(name)"
      if let violation = GA4Rules.checkName(name, kind: .parameter, path: parameterPath) {
        violations.append(violation)
      }
      if let violation = GA4Rules.checkItemsValue(name, value, path: parameterPath) { violations.append(violation) }
      switch value {
      case .string(let text):
        if let violation = GA4Rules.checkParameterValue(text, path: parameterPath) { violations.append(violation) }
      case .items(let items):
        violations += itemsViolations(items, name: name, path: parameterPath)
      case .int, .double, .bool:
        break
      }
    }
    if let violation = GA4Rules.checkCurrency(
      eventName: event.name, hasValue: event.params["value"] != nil, hasCurrency: event.params["currency"] != nil,
      path: "\(path).params.currency")
    {
      violations.append(violation)
    }
    if let micros = event.timestampMicros ?? requestMicros,
      let violation = GA4Rules.checkTimestamp(micros, now: nowMicros, path: "\(path).timestamp_micros")
    {
      violations.append(violation)
    }
    return violations
  }

  /// The violations of a list parameter: only `items` may be one, with at most 200 valid items.
  static func itemsViolations(_ items: [GA4Item], name: String, path: String) -> [GA4Violation] {
    if let violation = GA4Rules.checkListParameter(name, path: path) { return [violation] }
    var violations: [GA4Violation] = []
    if let violation = GA4Rules.checkItemCount(items.count, path: path) { violations.append(violation) }
    for (index, item) in items.enumerated() {
      violations += GA4Rules.itemViolations(item, path: "\(path)[\(index)]")
    }
    return violations
  }

  /// The violations of a request's user properties.
  public static func userPropertyViolations(_ properties: [String: GA4UserProperty]) -> [GA4Violation] {
    var violations: [GA4Violation] = []
    if let violation = GA4Rules.checkCount(
      properties.count, limit: GA4Limits.maximumUserProperties, what: "user properties", path: "user_properties"
    ) {
      violations.append(violation)
    }
    for (name, property) in properties.sorted(by: { $0.key < $1.key }) {
      let path = "user_properties.\(name)"
      if let violation = GA4Rules.checkName(name, kind: .userProperty, path: path) { violations.append(violation) }
      switch property.value {
      case .string(let text):
        if let violation = GA4Rules.checkUserPropertyValue(text, path: path) { violations.append(violation) }
        if text.utf8.contains(0) {
          violations.append(GA4Violation(fieldPath: path, code: .valueInvalid, message: "must not contain U+0000"))
        }
      case .items:
        violations.append(GA4Violation(fieldPath: path, code: .valueInvalid, message: "a user property is not a list"))
      case .int, .double, .bool:
        break
      }
    }
    return violations
  }

  /// The violations of a request's consent: each field given must be `GRANTED` or `DENIED`.
  public static func consentViolations(_ consent: GA4Consent?) -> [GA4Violation] {
    (consent?.fields ?? []).compactMap { name, value in
      GA4Consent.Status(rawValue: value) != nil
        ? nil
        : GA4Violation(
          fieldPath: "consent.\(name)", code: .valueInvalid, message: "\"\(value)\" must be GRANTED or DENIED")
    }
  }
}
