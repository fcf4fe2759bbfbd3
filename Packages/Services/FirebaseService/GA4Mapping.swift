import CoreTracker
import Delivery
import Foundation
import GA4Wire
import ServiceSupport
import WireJSON

/// Turns one event into one outbox record, enforcing every GA4 limit with the service's policy.
///
/// The record is `[request-level fields][event JSON]` (``RecordFraming``): the request-level part
/// (`app_instance_id`, `user_id`, `user_properties`) is written once per change and shared by the
/// records that can go in one request.
struct GA4Mapper {
  /// What became of one event.
  enum Outcome {
    /// Send `record`; `repairs` lists what was changed to fit, by reason.
    case send(record: [UInt8], repairs: [String])
    /// Drop it for `reason`; `violations` are the broken rules (reported in strict mode).
    case drop(reason: DropReason, violations: [GA4Violation])
  }

  let policy: LimitPolicy
  /// A custom `app_instance_id`, or `nil` for the anonymous id without dashes (cached per id).
  let appInstanceID: (@Sendable (TrackedEvent) -> String)?
  private var lastAnonymousID: String?
  private var lastInstance = ""
  private var lastRequestKey: RequestKey?
  private var requestJSON: [UInt8] = []
  private var requestRepairs: [String] = []
  private var requestViolations: [GA4Violation] = []
  /// The last event time per session (ms), for `engagement_time_msec`.
  private var lastEventInSession: (session: Int64, milliseconds: Int64)?

  init(policy: LimitPolicy, appInstanceID: (@Sendable (TrackedEvent) -> String)?) {
    self.policy = policy
    self.appInstanceID = appInstanceID
  }

  private struct RequestKey: Equatable {
    var instance: String
    var userID: String?
    var properties: EventParameters
  }

  private var repairs: Bool {
    if case .repair = policy { return true }
    return false
  }

  mutating func map(_ event: TrackedEvent) -> Outcome {
    var violations: [GA4Violation] = []
    var repaired: [String] = []
    let instance: String
    if let appInstanceID {
      instance = appInstanceID(event)
    } else {
      if event.anonymousID != lastAnonymousID {
        lastAnonymousID = event.anonymousID
        lastInstance = FirebaseService.defaultAppInstanceID(event)
      }
      instance = lastInstance
    }
    useRequest(instance: instance, userID: event.userID, properties: event.userProperties)
    violations += requestViolations
    repaired += requestRepairs

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
    if let violation = GA4Rules.checkName(name, kind: .event, path: "events[0].name") {
      if repairs, let fixed = GA4Rules.repairedName(name, kind: .event) {
        name = fixed
        repaired.append("event_name_\(violation.code.rawValue.lowercased())")
      } else {
        violations.append(violation)
      }
    }

    if let session = event.session {
      let now = Int64((event.timestamp.timeIntervalSince1970 * 1000).rounded())
      var engagement: Int64 = 1
      if let last = lastEventInSession, last.session == session.id {
        engagement = min(max(1, now - last.milliseconds), 1_800_000)
      }
      lastEventInSession = (session.id, now)
      parameters.append(("session_id", .int(session.id)))
      parameters.append(("engagement_time_msec", .int(engagement)))
    }
    for parameter in event.parameters {
      var key = parameter.key
      // Built only when a rule is broken (the rules take it as an autoclosure).
      func path() -> String { "events[0].params.\(parameter.key)" }
      if let violation = GA4Rules.checkName(key, kind: .parameter, path: path()) {
        if repairs, let fixed = GA4Rules.repairedName(key, kind: .parameter) {
          key = fixed
          repaired.append("parameter_name_\(violation.code.rawValue.lowercased())")
        } else if repairs {
          repaired.append("parameter_left_out")
          continue
        } else {
          violations.append(violation)
          continue
        }
      }
      if key == "screen_class", parameters.first?.0 == "screen_name" { continue }  // used above
      if parameters.contains(where: { $0.0 == key }) {
        if repairs {
          repaired.append("parameter_left_out")
          continue
        }
        violations.append(GA4Violation(fieldPath: path(), code: .nameDuplicated, message: "\"\(key)\" appears twice"))
        continue
      }
      var value = Self.value(parameter.value)
      if case .string(let text) = value, let violation = GA4Rules.checkParameterValue(text, path: path()) {
        if repairs {
          value = .string(String(text.prefix(GA4Limits.maximumParameterValueLength)))
          repaired.append("parameter_value_truncated")
        } else {
          violations.append(violation)
        }
      }
      parameters.append((key, value))
    }
    if let violation = GA4Rules.checkCount(
      parameters.count, limit: GA4Limits.maximumParametersPerEvent, what: "parameters", path: "events[0].params"
    ) {
      if repairs {
        parameters.removeLast(parameters.count - GA4Limits.maximumParametersPerEvent)
        repaired.append("parameters_left_out")
      } else {
        violations.append(violation)
      }
    }

    if !violations.isEmpty {
      let code = violations[0].code.rawValue.lowercased()
      return .drop(reason: DropReason("ga4_\(code)"), violations: violations)
    }
    var json = JSONWriter(capacity: 64 + parameters.count * 32)
    json.beginObject()
    json.key("name")
    json.string(name)
    json.key("params")
    json.beginObject()
    for (key, value) in parameters {
      json.key(key)
      switch value {
      case .string(let text): json.string(text)
      case .int(let number): json.int(number)
      case .double(let number): json.double(number)
      }
    }
    json.endObject()
    json.key("timestamp_micros")
    json.int(Int64((event.timestamp.timeIntervalSince1970 * 1_000_000).rounded()))
    json.endObject()
    return .send(record: RecordFraming.frame(context: requestJSON, body: json.bytes), repairs: repaired)
  }

  /// GA4 takes strings and numbers: booleans become `"true"`/`"false"`, dates ISO 8601 strings.
  static func value(_ value: ParameterValue) -> GA4Value {
    switch value {
    case .string(let text): .string(text)
    case .int(let number): .int(Int64(number))
    case .double(let number): .double(number)
    case .bool(let flag): .string(flag ? "true" : "false")
    case .date(let date): .string(ISO8601.string(from: date))
    }
  }

  /// Writes (and checks) the request-level fields when they change.
  private mutating func useRequest(instance: String, userID: String?, properties: EventParameters) {
    let key = RequestKey(instance: instance, userID: userID, properties: properties)
    guard key != lastRequestKey else { return }
    lastRequestKey = key
    requestRepairs = []
    requestViolations = []
    var json = JSONWriter(capacity: 128)
    json.key("app_instance_id")
    json.string(instance)
    if var userID {
      if userID.count > GA4Limits.maximumUserIDLength {
        let violation = GA4Violation(
          fieldPath: "user_id", code: .valueOutOfBounds,
          message: "is longer than \(GA4Limits.maximumUserIDLength) characters"
        )
        if repairs {
          userID = String(userID.prefix(GA4Limits.maximumUserIDLength))
          requestRepairs.append("user_id_truncated")
        } else {
          requestViolations.append(violation)
        }
      }
      json.key("user_id")
      json.string(userID)
    }
    var written: [(String, GA4Value)] = []
    for property in properties {
      var name = property.key
      let path = "user_properties.\(name)"
      if let violation = GA4Rules.checkName(name, kind: .userProperty, path: path) {
        if repairs, let fixed = GA4Rules.repairedName(name, kind: .userProperty),
          !written.contains(where: { $0.0 == fixed })
        {
          name = fixed
          requestRepairs.append("user_property_name_\(violation.code.rawValue.lowercased())")
        } else if repairs {
          requestRepairs.append("user_property_left_out")
          continue
        } else {
          requestViolations.append(violation)
          continue
        }
      }
      var value = Self.value(property.value)
      if case .string(let text) = value, let violation = GA4Rules.checkUserPropertyValue(text, path: path) {
        if repairs {
          value = .string(String(text.prefix(GA4Limits.maximumUserPropertyValueLength)))
          requestRepairs.append("user_property_value_truncated")
        } else {
          requestViolations.append(violation)
        }
      }
      written.append((name, value))
    }
    if let violation = GA4Rules.checkCount(
      written.count, limit: GA4Limits.maximumUserProperties, what: "user properties", path: "user_properties"
    ) {
      if repairs {
        written.removeLast(written.count - GA4Limits.maximumUserProperties)
        requestRepairs.append("user_properties_left_out")
      } else {
        requestViolations.append(violation)
      }
    }
    if !written.isEmpty {
      json.key("user_properties")
      json.beginObject()
      for (name, value) in written {
        json.key(name)
        json.beginObject()
        json.key("value")
        switch value {
        case .string(let text): json.string(text)
        case .int(let number): json.int(number)
        case .double(let number): json.double(number)
        }
        json.endObject()
      }
      json.endObject()
    }
    requestJSON = json.bytes
  }
}
