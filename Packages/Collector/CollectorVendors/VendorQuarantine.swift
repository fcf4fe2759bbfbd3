public import CollectorIngest
public import CollectorStore
import CollectorWire
import Foundation
import GA4Wire
public import MixpanelWire

/// Refused GA4 events in the quarantine, and their replay: each kept as a Measurement Protocol
/// request of its own (the request's other members around the one event) with the URL's
/// `firebase_app_id`, as `{"firebase_app_id": …, "request": {…}}`. A request-level violation keeps
/// the whole body as one entry. GA4 events are stored under ids derived from their content, so a
/// replay stores each once.
public enum GA4Quarantine {
  /// The route name entries are quarantined under.
  public static let route = "ga4_collect"

  /// The quarantined entries for `refused` (reasons by event position) of the request `body`.
  public static func entries(
    refused: [Int: [String]], body: [UInt8], firebaseAppID: String, app: String, receivedAt: Int64
  ) -> [QuarantinedEntry] {
    guard !refused.isEmpty, let parts = RequestEntries(body, arrays: ["events"]) else { return [] }
    let events = parts.elements("events")
    let whole = refused.count == events.count && Set(refused.values).count == 1 && events.count > 1
    let kept: [(String, [String])] =
      whole
      ? [(String(decoding: body, as: UTF8.self), refused.values.first ?? [])]
      : refused.keys.sorted().filter(events.indices.contains).map { (parts.single("events", $0), refused[$0] ?? []) }
    return kept.map { request, reasons in
      let wrapped = #"{"firebase_app_id":\#(quoted(firebaseAppID)),"request":\#(request)}"#
      return QuarantinedEntry(
        id: ContentID.make([route, app, firebaseAppID, request]), app: app, route: route, receivedAt: receivedAt,
        entry: wrapped, reasons: reasons)
    }
  }

  /// A quarantined GA4 entry read again under `policy`: its rows, or its reasons now.
  public static func replay(_ entry: QuarantinedEntry, policy: IngestPolicy) -> ReplayOutcome {
    struct Wrapper: Decodable {
      var firebaseAppID: String
      var request: GA4Request
      enum CodingKeys: String, CodingKey {
        case firebaseAppID = "firebase_app_id"
        case request
      }
    }
    guard let wrapper = try? JSONDecoder().decode(Wrapper.self, from: Data(entry.entry.utf8)) else {
      return .refused(["entry: is not a Measurement Protocol request"])
    }
    let report = GA4Validator.validate(wrapper.request, bodyBytes: 0, nowMicros: entry.receivedAt * 1000)
    let duplicates = DuplicateKeys.paths(in: Array(entry.entry.utf8)).compactMap { path in
      path.hasPrefix("request.") ? String(path.dropFirst("request.".count)) : nil
    }
    let (rows, refused) = GA4Ingest.outcome(
      of: wrapper.request, report: report, app: entry.app, firebaseAppID: wrapper.firebaseAppID,
      receivedAt: entry.receivedAt, policy: policy, duplicates: duplicates)
    guard refused.isEmpty else { return .refused(refused.keys.sorted().flatMap { refused[$0] ?? [] }) }
    return .stored(rows)
  }

  private static func quoted(_ text: String) -> String {
    String(decoding: (try? JSONEncoder().encode(text)) ?? Data(#""""#.utf8), as: UTF8.self)
  }
}

/// Refused Mixpanel events in the quarantine, and their replay: each kept as the event object as
/// sent (one line of NDJSON). Mixpanel events are stored under ids derived from their
/// de-duplication key, so a replay stores each once.
public enum MixpanelQuarantine {
  /// The route name entries are quarantined under.
  public static let route = "mixpanel_import"

  /// The quarantined entries for `failed` of the request `body` (a JSON array or NDJSON).
  public static func entries(
    failed: [MixpanelImportResponse.FailedRecord], body: [UInt8], app: String, receivedAt: Int64
  ) -> [QuarantinedEntry] {
    guard !failed.isEmpty else { return [] }
    let elements =
      MixpanelBody.isArray(body)
      ? RequestEntries.arrayElements(body) ?? []
      : MixpanelBody.lines(of: body).map { String(decoding: $0, as: UTF8.self) }
    var reasons: [Int: [String]] = [:]
    for record in failed where elements.indices.contains(record.index) {
      reasons[record.index, default: []].append("\(record.field): \(record.message)")
    }
    return reasons.keys.sorted().map { index in
      let entry = withoutToken(elements[index])
      return QuarantinedEntry(
        id: ContentID.make([route, app, entry]), app: app, route: route, receivedAt: receivedAt, entry: entry,
        reasons: reasons[index] ?? [])
    }
  }

  /// The event without `properties.token` (on `/track` the write key: a secret is never stored);
  /// text that is not such an object as it is.
  static func withoutToken(_ text: String) -> String {
    guard case .object(let event)? = try? JSONDocument.parse(Array(text.utf8)),
      case .object(let properties)? = event["properties"], properties["token"] != nil
    else { return text }
    let kept = JSONObject(properties.fields.filter { $0.key != "token" })
    let fields = event.fields.map { $0.key == "properties" ? JSONField(key: $0.key, value: .object(kept)) : $0 }
    return String(decoding: JSONValue.object(JSONObject(fields)).json, as: UTF8.self)
  }

  /// Entries holding a key given twice refused, with its path (one rule on every route).
  public static func refusingDuplicateKeys(
    _ entries: [Result<MixpanelEvent, MixpanelViolation>], body: [UInt8]
  ) -> [Result<MixpanelEvent, MixpanelViolation>] {
    let array = MixpanelBody.isArray(body)
    let lines = array ? [body] : MixpanelBody.lines(of: body)
    var entries = entries
    for (number, line) in lines.enumerated() {
      for path in DuplicateKeys.paths(in: line) {
        // `[3].properties.x` in an array; the line's own position in NDJSON.
        let index = array ? Int(path.dropFirst().prefix { $0 != "]" }) ?? -1 : number
        guard entries.indices.contains(index) else { continue }
        let field = array ? String(path.drop { $0 != "." }.dropFirst()) : path
        entries[index] = .failure(MixpanelViolation(field: field, message: "appears twice"))
      }
    }
    return entries
  }

  /// A quarantined Mixpanel event read again under `policy`: its row, or its reasons now.
  public static func replay(_ entry: QuarantinedEntry, policy: IngestPolicy) -> ReplayOutcome {
    let decoded: [Result<MixpanelEvent, MixpanelViolation>]
    do {
      decoded = try MixpanelBody.decode(Array(entry.entry.utf8))
    } catch {
      return .refused(["\(error.field): \(error.message)"])
    }
    let checked = refusingDuplicateKeys(decoded, body: Array(entry.entry.utf8))
    let (rows, failed) = MixpanelIngest.rows(of: checked, app: entry.app, receivedAt: entry.receivedAt, policy: policy)
    guard failed.isEmpty else { return .refused(failed.map { "\($0.field): \($0.message)" }) }
    return .stored(rows)
  }
}
