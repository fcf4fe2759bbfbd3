import CoreTracker
import Delivery
import Foundation
import GA4Wire
import ServiceSupport
import WireJSON

/// Turns one event into one outbox record, enforcing every GA4 limit with the service's policy.
///
/// The record is `[request-level fields][event JSON]` (``RecordFraming``): the request-level part
/// (`app_instance_id`, `user_id`, `user_properties`, `consent`) is written once per change and shared by the
/// records that can go in one request.
struct GA4Mapper: EventMapper {
  let policy: LimitPolicy
  /// A custom `app_instance_id`, or `nil` for the anonymous id without dashes (cached per id).
  let appInstanceID: (@Sendable (TrackedEvent) -> String)?
  /// The advertising consent to send with each request, read as each event is mapped.
  let consent: (@Sendable () -> GA4Consent?)?
  private var lastAnonymousID: String?
  private var lastInstance = ""
  private var lastRequestKey: RequestKey?
  private var requestJSON: [UInt8] = []
  /// What the request-level fields needed (repairs, violations): shared by the events using them.
  private var requestLedger: LimitLedger<GA4Violation>
  /// The last event time per session (ms), for `engagement_time_msec`.
  private var lastEventInSession: (session: Int64, milliseconds: Int64)?

  init(
    policy: LimitPolicy, appInstanceID: (@Sendable (TrackedEvent) -> String)?,
    consent: (@Sendable () -> GA4Consent?)? = nil
  ) {
    self.policy = policy
    self.appInstanceID = appInstanceID
    self.consent = consent
    requestLedger = LimitLedger(policy: policy)
  }

  private struct RequestKey: Equatable {
    var instance: String
    var userID: String?
    var properties: EventParameters
    var consent: GA4Consent?
  }

  mutating func map(_ event: TrackedEvent) -> MappingOutcome<GA4Violation> {
    useRequest(
      RequestKey(
        instance: instance(of: event), userID: event.userID, properties: event.userProperties, consent: consent?()))
    var ledger = LimitLedger<GA4Violation>(policy: policy)
    ledger.merge(requestLedger)
    var name = event.name
    var parameters: [(String, GA4Value)] = []
    parameters.reserveCapacity(event.parameters.count + 4)
    // A screen view in the uniform shape becomes GA4's `screen_view` (a feature's own Firebase
    // payload, such as `view_item`, is sent as it is).
    if event.kind == .screenView, !event.isServicePayload, name != "screen_view" {
      var screenClass = name
      if case .string(let declared) = event.parameters["screen_class"] { screenClass = declared }
      parameters.append(("screen_name", .string(name)))
      parameters.append(("screen_class", .string(screenClass)))
      name = "screen_view"
    }
    if let violation = GA4Rules.checkName(name, kind: .event, path: "events[0].name"),
      let fixed = ledger.fix(
        violation, GA4Rules.repairedName(name, kind: .event), as: "event_name_\(violation.code.rawValue.lowercased())")
    {
      name = fixed
    }
    if let session = event.session { addSessionParameters(session, at: event.timestamp, to: &parameters) }
    Self.add(event.parameters, to: &parameters, &ledger)
    if let violation = GA4Rules.checkCount(
      parameters.count, limit: GA4Limits.maximumParametersPerEvent, what: "parameters", path: "events[0].params"),
      ledger.fix(violation, (), as: "parameters_left_out") != nil
    {
      parameters.removeLast(parameters.count - GA4Limits.maximumParametersPerEvent)
    }
    if let violation = GA4Rules.checkCurrency(
      eventName: name, hasValue: parameters.contains { $0.0 == "value" },
      hasCurrency: parameters.contains { $0.0 == "currency" }, path: "events[0].params.currency")
    {
      ledger.leaveOut(violation, as: "value_left_out")
      parameters.removeAll { $0.0 == "value" }
    }
    if let first = ledger.violations.first {
      return .drop(reason: DropReason("ga4_\(first.code.rawValue.lowercased())"), violations: ledger.violations)
    }
    let body = Self.eventJSON(name: name, parameters: parameters, at: event.timestamp)
    return .send(record: RecordFraming.frame(context: requestJSON, body: body), repairs: ledger.repaired)
  }

  /// The `app_instance_id` of the event (cached per anonymous id).
  private mutating func instance(of event: TrackedEvent) -> String {
    if let appInstanceID { return appInstanceID(event) }
    if event.anonymousID != lastAnonymousID {
      lastAnonymousID = event.anonymousID
      lastInstance = FirebaseService.defaultAppInstanceID(event)
    }
    return lastInstance
  }

  /// `session_id` and `engagement_time_msec` (the time since the session's previous event, 1 ms
  /// to 30 minutes), as GA4's sessions need them.
  private mutating func addSessionParameters(
    _ session: TrackingSession, at timestamp: Date, to parameters: inout [(String, GA4Value)]
  ) {
    let now = Int64((timestamp.timeIntervalSince1970 * 1000).rounded())
    var engagement: Int64 = 1
    if let last = lastEventInSession, last.session == session.id {
      engagement = min(max(1, now - last.milliseconds), 1_800_000)
    }
    lastEventInSession = (session.id, now)
    parameters.append(("session_id", .int(session.id)))
    parameters.append(("engagement_time_msec", .int(engagement)))
  }

  /// The event's own parameters, each checked (name, duplicate, value length).
  private static func add(
    _ source: EventParameters, to parameters: inout [(String, GA4Value)], _ ledger: inout LimitLedger<GA4Violation>
  ) {
    for parameter in source {
      // Built only when a rule is broken (the rules take it as an autoclosure).
      func path() -> String { "events[0].params.\(parameter.key)" }
      guard let key = parameterName(parameter.key, counting: "parameter", path: path, &ledger) else { continue }
      if key == "screen_class", parameters.first?.0 == "screen_name" { continue }  // used above
      if parameters.contains(where: { $0.0 == key }) {
        ledger.leaveOut(
          GA4Violation(fieldPath: path(), code: .nameDuplicated, message: "\"\(key)\" appears twice"),
          as: "parameter_left_out")
        continue
      }
      guard !parameter.value.isStructured else {
        if let items = structured(parameter.value, key: key, path: path(), &ledger) { parameters.append((key, items)) }
        continue
      }
      var value = Self.scalar(parameter.value)
      if let violation = GA4Rules.checkItemsValue(key, value, path: path()) {
        ledger.leaveOut(violation, as: "parameter_left_out")
        continue
      }
      if case .string(let text) = value, let violation = GA4Rules.checkParameterValue(text, path: path()),
        let fixed = ledger.fix(
          violation, String(text.prefix(GA4Limits.maximumParameterValueLength)), as: "parameter_value_truncated")
      {
        value = .string(fixed)
      }
      parameters.append((key, value))
    }
  }

  /// `name` as GA4 takes a parameter name: as it is, repaired (counted as `<counting>_name_<code>`),
  /// or `nil` when it is left out (counted as `<counting>_left_out`, or a violation).
  static func parameterName(
    _ name: String, counting: String, path: () -> String, _ ledger: inout LimitLedger<GA4Violation>
  ) -> String? {
    guard let violation = GA4Rules.checkName(name, kind: .parameter, path: path()) else { return name }
    return ledger.fix(
      violation, GA4Rules.repairedName(name, kind: .parameter),
      as: "\(counting)_name_\(violation.code.rawValue.lowercased())", leftOut: "\(counting)_left_out")
  }

  /// One event's JSON: name, parameters, time in microseconds.
  private static func eventJSON(name: String, parameters: [(String, GA4Value)], at timestamp: Date) -> [UInt8] {
    var json = JSONWriter(capacity: 64 + parameters.count * 32)
    json.beginObject()
    json.member("name", name)
    json.key("params")
    write(parameters, to: &json)
    json.member("timestamp_micros", Int64((timestamp.timeIntervalSince1970 * 1_000_000).rounded()))
    json.endObject()
    return json.bytes
  }

  /// Parameters as a JSON object; `wrapped` puts each value in `{"value": …}` (user properties).
  private static func write(_ parameters: [(String, GA4Value)], wrapped: Bool = false, to json: inout JSONWriter) {
    json.beginObject()
    for (key, value) in parameters {
      json.key(key)
      if wrapped {
        json.beginObject()
        json.key("value")
      }
      value.write(to: &json)
      if wrapped { json.endObject() }
    }
    json.endObject()
  }

  /// GA4 takes strings and numbers: booleans become `"true"`/`"false"`, dates ISO 8601 strings, a
  /// structured value (never passed here by the mapper) its JSON text.
  static func scalar(_ value: ParameterValue) -> GA4Value {
    switch value {
    case .string(let text): .string(text)
    case .int(let number): .int(Int64(number))
    case .double(let number): .double(number)
    case .bool(let flag): .string(flag ? "true" : "false")
    case .date(let date): .string(ISO8601.string(from: date))
    case .list, .object: .string(value.text)
    }
  }

  /// Writes (and checks) the request-level fields when they change.
  private mutating func useRequest(_ key: RequestKey) {
    guard key != lastRequestKey else { return }
    lastRequestKey = key
    var ledger = LimitLedger<GA4Violation>(policy: policy)
    var json = JSONWriter(capacity: 128)
    json.member("app_instance_id", key.instance)
    if var userID = key.userID {
      if userID.count > GA4Limits.maximumUserIDLength,
        let fixed = ledger.fix(
          GA4Violation(
            fieldPath: "user_id", code: .valueOutOfBounds,
            message: "is longer than \(GA4Limits.maximumUserIDLength) characters"),
          String(userID.prefix(GA4Limits.maximumUserIDLength)), as: "user_id_truncated")
      {
        userID = fixed
      }
      json.member("user_id", userID)
    }
    let written = Self.userProperties(key.properties, &ledger)
    if !written.isEmpty {
      json.key("user_properties")
      Self.write(written, wrapped: true, to: &json)
    }
    if let consent = key.consent, !consent.fields.isEmpty {
      json.key("consent")
      Self.write(consent.fields.map { ($0.name, .string($0.value)) }, to: &json)
      // The legacy field, for receivers that predate `consent`: the same fact.
      if consent.adPersonalization == GA4Consent.Status.denied.rawValue {
        json.member("non_personalized_ads", true)
      }
    }
    requestJSON = json.bytes
    requestLedger = ledger
  }

  /// The user properties as GA4 takes them, each checked (name, value length, count).
  private static func userProperties(
    _ properties: EventParameters, _ ledger: inout LimitLedger<GA4Violation>
  ) -> [(String, GA4Value)] {
    var written: [(String, GA4Value)] = []
    for property in properties {
      var name = property.key
      let path = "user_properties.\(name)"
      if let violation = GA4Rules.checkName(name, kind: .userProperty, path: path) {
        let repaired = GA4Rules.repairedName(name, kind: .userProperty).flatMap { fixed in
          written.contains { $0.0 == fixed } ? nil : fixed
        }
        guard
          let fixed = ledger.fix(
            violation, repaired, as: "user_property_name_\(violation.code.rawValue.lowercased())",
            leftOut: "user_property_left_out")
        else { continue }
        name = fixed
      }
      var value = Self.scalar(property.value)
      if case .string(let text) = value, let violation = GA4Rules.checkUserPropertyValue(text, path: path),
        let fixed = ledger.fix(
          violation, String(text.prefix(GA4Limits.maximumUserPropertyValueLength)), as: "user_property_value_truncated")
      {
        value = .string(fixed)
      }
      written.append((name, value))
    }
    if let violation = GA4Rules.checkCount(
      written.count, limit: GA4Limits.maximumUserProperties, what: "user properties", path: "user_properties"),
      ledger.fix(violation, (), as: "user_properties_left_out") != nil
    {
      written.removeLast(written.count - GA4Limits.maximumUserProperties)
    }
    return written
  }
}
