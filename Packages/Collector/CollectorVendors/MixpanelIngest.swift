public import CollectorIngest
public import CollectorStore
import CollectorWire
import Foundation
public import MixpanelWire
import WireJSON

/// Turns the events of an `/import` request into rows with Mixpanel's strict-mode contract
/// (``MixpanelValidator``, the rules the Mixpanel service enforces before sending): valid rows are
/// stored, the others come back as `failed_records`.
///
/// The event id is derived from Mixpanel's own de-duplication key (`event`, `distinct_id`, `time`,
/// `$insert_id`), so a resent batch stores nothing twice. Strings are cut at 255 characters, as
/// Mixpanel does. `$device_id` (or `distinct_id`) is the device, `$user_id` the user, and `$os`,
/// `$os_version`, `$app_version_string`, `$app_build_number`, `$model`, `mp_lib` and `$lib_version`
/// fill the context columns; the other properties are the event's parameters.
public enum MixpanelIngest {
  /// Properties that become columns, not parameters.
  static let columns: Set<String> = [
    "distinct_id", "time", "$insert_id", "token", "$device_id", "$user_id", "$os", "$os_version",
    "$app_version_string", "$app_build_number", "$model", "mp_lib", "$lib_version",
  ]

  /// The rows of the valid entries and a failed record for each other one.
  public static func rows(
    of entries: [Result<MixpanelEvent, MixpanelViolation>], app: String, receivedAt: Int64, policy: IngestPolicy
  ) -> (rows: StoreBatch, failed: [MixpanelImportResponse.FailedRecord]) {
    var events: [StoredEvent] = []
    var failed: [MixpanelImportResponse.FailedRecord] = []
    let encoder = JSONEncoder()
    for (index, entry) in entries.enumerated() {
      switch entry.flatMap({ row(of: $0, app: app, receivedAt: receivedAt, policy: policy, encoder: encoder) }) {
      case .success(let stored): events.append(stored)
      case .failure(let violation):
        let insertID = (try? entry.get())?.properties["$insert_id"]?.string
        failed.append(.init(index: index, insertID: insertID, field: violation.field, message: violation.message))
      }
    }
    return (StoreBatch(events: events), failed)
  }

  /// The row of one event that passed Mixpanel's own validation, or the rule it breaks here.
  private static func row(
    of event: MixpanelEvent, app: String, receivedAt: Int64, policy: IngestPolicy, encoder: JSONEncoder
  ) -> Result<StoredEvent, MixpanelViolation> {
    let bytes = (try? encoder.encode(event).count) ?? 0
    if let violation = MixpanelValidator.violations(of: event, bytes: bytes, nowMilliseconds: receivedAt).first {
      return .failure(violation)
    }
    let time = event.timeMilliseconds!
    let occurredAt = min(time, receivedAt)
    guard receivedAt - occurredAt <= policy.maximumEventAge else {
      return .failure(MixpanelViolation(field: "properties.time", message: "is older than the collector keeps events"))
    }
    func text(_ key: String) -> String { event.properties[key]?.string.map(bounded) ?? "" }
    let distinctID: String =
      switch event.properties["distinct_id"] {
      case .string(let value)?: value
      case .int(let value)?: String(value)
      default: ""
      }
    let parametersJSON = json(JSONObject(event.properties.fields.filter { !columns.contains($0.key) }))
    guard parametersJSON.utf8.count <= 32 * 1024 else {
      return .failure(MixpanelViolation(field: "properties", message: "the parameters are larger than 32 KB"))
    }
    let insertID = event.properties["$insert_id"]?.string
    let stored = StoredEvent(
      app: app, eventID: ContentID.make(["mixpanel", event.event, distinctID, String(time), insertID ?? ""]),
      name: bounded(event.event), kind: "event", occurredAt: occurredAt, utcOffsetMinutes: 0, receivedAt: receivedAt,
      deviceID: bounded(event.properties["$device_id"]?.string ?? distinctID),
      userID: event.properties["$user_id"]?.string.flatMap { $0.isEmpty ? nil : bounded($0) }, sessionID: nil,
      context: EventContext([
        .appVersion: text("$app_version_string"), .appBuild: text("$app_build_number"), .osName: text("$os"),
        .osVersion: text("$os_version"), .platform: text("$os"), .deviceModel: text("$model"),
        .libraryName: text("mp_lib"), .libraryVersion: text("$lib_version"),
      ]),
      parametersJSON: parametersJSON)
    if let field = stored.fieldWithNUL {
      return .failure(
        MixpanelViolation(field: field == "parameters" ? "properties" : field, message: "must not contain U+0000"))
    }
    if let problem = policy.planProblem(app: app, name: stored.name, parametersJSON: parametersJSON) {
      return .failure(
        MixpanelViolation(
          field: problem.field == "name"
            ? "event" : problem.field.replacingOccurrences(of: "parameters", with: "properties"),
          message: problem.reason))
    }
    return .success(stored)
  }

  /// Cut at 255 characters (Mixpanel's rule) and 256 bytes (the collector's column bound).
  static func bounded(_ text: String) -> String {
    var value = MixpanelRules.truncated(text).value
    while value.utf8.count > 256 { value.removeLast() }
    return value
  }

  /// The properties as stored parameters: strings cut at 255 characters, at every depth.
  static func json(_ properties: JSONObject) -> String {
    String(decoding: truncated(.object(properties)).json, as: UTF8.self)
  }

  private static func truncated(_ value: JSONValue) -> JSONValue {
    switch value {
    case .string(let text): .string(MixpanelRules.truncated(text).value)
    case .array(let items): .array(items.map(truncated))
    case .object(let object):
      .object(JSONObject(object.fields.map { JSONField(key: $0.key, value: truncated($0.value)) }))
    default: value
    }
  }
}
