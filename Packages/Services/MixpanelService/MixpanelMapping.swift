import CoreTracker
import Foundation
import MixpanelWire
import ServiceSupport
import WireJSON

/// Turns one event into one Mixpanel event (`{"event", "properties"}`), enforcing the limits with
/// the service's policy.
struct MixpanelMapper: EventMapper {
  let policy: LimitPolicy
  /// The project token written into each event (`/track` only).
  let token: String?

  mutating func map(_ event: TrackedEvent) -> MappingOutcome<MixpanelViolation> {
    var ledger = LimitLedger<MixpanelViolation>(policy: policy)
    let insertID = MixpanelRules.insertID(from: event.id.description)
    if let violation = MixpanelRules.checkInsertID(insertID) { ledger.violations.append(violation) }
    let context = event.context
    // Identity, time and Mixpanel's standard device properties first; the event's own after them.
    let device: [(key: String, value: String)] = [
      ("$os", context.osName), ("$os_version", context.osVersion), ("$app_version_string", context.appVersion),
      ("$app_build_number", context.appBuild), ("$model", context.deviceModel), ("mp_lib", context.libraryName),
      ("$lib_version", context.libraryVersion),
    ]
    let fixedCount =
      4 + (event.userID == nil ? 0 : 1) + (token == nil ? 0 : 1) + device.count(where: { !$0.value.isEmpty })
    let room = MixpanelLimits.propertyLimit - 1 - fixedCount
    var kept = event.parameters.count
    if kept > room, let violation = MixpanelRules.checkPropertyCount(kept + fixedCount),
      let fitting = ledger.fix(violation, room, as: "properties_left_out")
    {
      kept = fitting
    }
    var json = JSONWriter(capacity: 192 + kept * 32)
    json.beginObject()
    json.member("event", cut(event.name, field: "event", &ledger))
    json.key("properties")
    json.beginObject()
    json.member("time", Int64((event.timestamp.timeIntervalSince1970 * 1000).rounded()))
    json.member("$insert_id", insertID)
    func property(_ key: String, _ value: String) {
      json.member(key, cut(value, field: "properties.\(key)", &ledger))
    }
    property("distinct_id", event.userID ?? event.anonymousID)
    property("$device_id", event.anonymousID)
    if let user = event.userID { property("$user_id", user) }
    for (key, value) in device where !value.isEmpty { property(key, value) }
    if let token { property("token", token) }
    for parameter in event.parameters.prefix(kept) {
      json.key(cut(parameter.key, field: "properties", &ledger))
      switch parameter.value {
      case .string(let text): json.string(cut(text, field: "properties.\(parameter.key)", &ledger))
      case .int(let number): json.int(number)
      case .double(let number): json.double(number)
      case .bool(let flag): json.bool(flag)
      case .date(let date): json.string(ISO8601.string(from: date))
      case .list, .object: json.raw(structured(parameter.value, key: parameter.key, &ledger))
      }
    }
    json.endObject()
    json.endObject()
    if json.bytes.count >= MixpanelLimits.eventByteLimit {
      ledger.violations.append(MixpanelViolation(field: "", message: "the event is \(json.bytes.count) bytes"))
    }
    guard ledger.violations.isEmpty else {
      return .drop(reason: DropReason("mixpanel_invalid"), violations: ledger.violations)
    }
    return .send(record: json.bytes, repairs: ledger.repaired)
  }

  /// A string as Mixpanel keeps it (255 characters): cut and counted when repairing, a violation
  /// otherwise (Mixpanel would cut it silently).
  func cut(
    _ text: String, field: @autoclosure () -> String, _ ledger: inout LimitLedger<MixpanelViolation>
  ) -> String {
    let (value, wasCut) = MixpanelRules.truncated(text)
    guard wasCut else { return text }
    let violation = MixpanelViolation(
      field: field(), message: "is longer than \(MixpanelLimits.maximumStringLength) characters")
    return ledger.fix(violation, value, as: "string_truncated") ?? text
  }
}
