public import CollectorIngest
public import CollectorStore
import CollectorWire
import Foundation
public import GA4Wire
import WireJSON

/// Turns a Measurement Protocol request into rows, with GA4's own rules (``GA4Validator``, the code
/// the Firebase service enforces before sending).
///
/// A request-level violation (no `app_instance_id`, more than 25 events, a body of 130 kB or more)
/// stores nothing; otherwise each event without a violation is stored and the others are dropped,
/// as GA4 does. GA4 events carry no id: the event id is derived from the app instance, the name,
/// the time and the parameters, so a request resent after a lost reply stores nothing twice.
public enum GA4Ingest {
  /// The rows of the events of `request` that have no violation in `report`.
  ///
  /// - Parameters:
  ///   - firebaseAppID: the `firebase_app_id` of the URL, kept as the events' app name.
  ///   - receivedAt: ms since 1970.
  public static func rows(
    of request: GA4Request, report: GA4Validator.Report, app: String, firebaseAppID: String, receivedAt: Int64,
    policy: IngestPolicy
  ) -> StoreBatch {
    outcome(
      of: request, report: report, app: app, firebaseAppID: firebaseAppID, receivedAt: receivedAt, policy: policy
    ).rows
  }

  /// The rows of the events of `request` that pass, and every other event's reasons by position
  /// (GA4's violations, an age past the collector's limit, text PostgreSQL cannot hold): what the
  /// quarantine keeps. A request-level violation refuses every event.
  ///
  /// `duplicates` are the paths of keys the body gives twice (``DuplicateKeys``): the event holding
  /// one is refused, and one outside every event refuses them all.
  public static func outcome(
    of request: GA4Request, report: GA4Validator.Report, app: String, firebaseAppID: String, receivedAt: Int64,
    policy: IngestPolicy, duplicates: [String] = []
  ) -> (rows: StoreBatch, refused: [Int: [String]]) {
    func reasons(_ violations: [GA4Violation]) -> [String] { violations.map { "\($0.fieldPath): \($0.message)" } }
    let outside = duplicates.filter { !$0.hasPrefix("events[") }.map { "\($0): appears twice" }
    guard report.request.isEmpty, outside.isEmpty, let instance = request.device else {
      let all = reasons(report.request) + outside
      return (StoreBatch(), Dictionary(uniqueKeysWithValues: request.events.indices.map { ($0, all) }))
    }
    var events: [StoredEvent] = []
    var refused: [Int: [String]] = [:]
    for (index, event) in request.events.enumerated() {
      let twice = duplicates.filter { $0.hasPrefix("events[\(index)].") }.map { "\($0): appears twice" }
      if report.events[index] != nil || !twice.isEmpty {
        refused[index] = reasons(report.events[index] ?? []) + twice
        continue
      }
      let micros = event.timestampMicros ?? request.timestampMicros ?? receivedAt * 1000
      let occurredAt = min(micros / 1000, receivedAt)
      guard receivedAt - occurredAt <= policy.maximumEventAge else {
        refused[index] = ["events[\(index)].timestamp_micros: \(policy.tooOldReason)"]
        continue
      }
      let stored = row(
        name: event.name, kind: event.name == "screen_view" ? "screen_view" : "event", parameters: event.params,
        micros: micros, occurredAt: occurredAt, of: request, instance: instance, app: app,
        firebaseAppID: firebaseAppID, receivedAt: receivedAt)
      // Text PostgreSQL cannot hold refuses its event alone.
      if let field = stored.fieldWithNUL {
        refused[index] = ["events[\(index)].\(field): must not contain U+0000"]
      } else if let problem = CommerceRules.problem(event: event.name, parametersJSON: stored.parametersJSON) {
        refused[index] = [
          "events[\(index)].\(problem.path.replacingOccurrences(of: "parameters", with: "params")): \(problem.reason)"
        ]
      } else if let problem = policy.planProblem(app: app, name: event.name, parametersJSON: stored.parametersJSON) {
        refused[index] = [
          "events[\(index)].\(problem.field.replacingOccurrences(of: "parameters", with: "params")): \(problem.reason)"
        ]
      } else {
        events.append(stored)
      }
    }
    if let first = events.min(by: { $0.occurredAt < $1.occurredAt }) {
      events += stateRows(
        of: request, at: first.occurredAt, instance: instance, app: app, firebaseAppID: firebaseAppID,
        receivedAt: receivedAt)
    }
    return (StoreBatch(events: events), refused)
  }

  /// The request's `user_properties` (an event `user_properties` of kind `identify`, each property's
  /// value a parameter) and its `consent` with `non_personalized_ads` (an event `consent` of kind
  /// `consent`), each at the time of the request's first stored event: resent, they store nothing
  /// twice.
  static func stateRows(
    of request: GA4Request, at occurredAt: Int64, instance: String, app: String, firebaseAppID: String,
    receivedAt: Int64
  ) -> [StoredEvent] {
    var consent = request.consent?.fields.map { ($0.name, GA4Value.string($0.value)) } ?? []
    if let flag = request.nonPersonalizedAds { consent.append(("non_personalized_ads", .bool(flag))) }
    let states: [(String, [String: GA4Value])] = [
      ("identify", request.userProperties.mapValues(\.value)),
      ("consent", Dictionary(consent, uniquingKeysWith: { first, _ in first })),
    ]
    return states.compactMap { kind, parameters in
      guard !parameters.isEmpty else { return nil }
      return row(
        name: kind == "identify" ? "user_properties" : kind, kind: kind, parameters: parameters,
        micros: occurredAt * 1000, occurredAt: occurredAt, of: request, instance: instance, app: app,
        firebaseAppID: firebaseAppID, receivedAt: receivedAt)
    }
  }

  /// One stored row of the request's device and user; its id derives from its content.
  private static func row(
    name: String, kind: String, parameters: [String: GA4Value], micros: Int64, occurredAt: Int64,
    of request: GA4Request, instance: String, app: String, firebaseAppID: String, receivedAt: Int64
  ) -> StoredEvent {
    let json = json(parameters)
    return StoredEvent(
      app: app, eventID: ContentID.make(["ga4", instance, name, String(micros), json]), name: name, kind: kind,
      occurredAt: occurredAt, utcOffsetMinutes: 0, receivedAt: receivedAt, deviceID: instance,
      userID: request.userID.flatMap { $0.isEmpty ? nil : $0 },
      sessionID: kind == "event" || kind == "screen_view" ? sessionID(parameters["session_id"]) : nil,
      context: EventContext([.appName: String(firebaseAppID.prefix(200)), .libraryName: "GA4 Measurement Protocol"]),
      parametersJSON: json)
  }

  /// The session an event's `session_id` names: a whole number, or a string of one (Google's own
  /// examples send `"123"`); anything else names none.
  static func sessionID(_ value: GA4Value?) -> Int64? {
    switch value {
    case .int(let session): session
    case .string(let text): Int64(text)
    case .double(let number) where number.rounded() == number && abs(number) < 9e15: Int64(number)
    default: nil
    }
  }

  /// The parameters as stored: a JSON object with sorted keys (items and their parameters too).
  static func json(_ parameters: [String: GA4Value]) -> String {
    var json = JSONWriter(capacity: 64 + parameters.count * 32)
    GA4Value.write(parameters, to: &json)
    return String(decoding: json.bytes, as: UTF8.self)
  }
}
