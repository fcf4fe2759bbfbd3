import CollectorIngest
public import CollectorReports
import CollectorRuntime
public import CollectorStore
import CollectorWire
import Foundation

/// What `trackerctl` does, as functions over an origin or a store; the executable only parses
/// arguments and prints.
public enum TrackerCtl {
  /// How a report is printed.
  public enum Format: String, Sendable, CaseIterable {
    /// An aligned table.
    case table
    /// The API's JSON.
    case json
    /// CSV (RFC 4180).
    case csv
  }

  /// The report `name` as text in `format`. The range is settled here (the defaults: the 7 days
  /// before now) and sent as it is, so the answer covers exactly the range a table is headed with.
  /// An app without any event is a usage error naming the apps there are. Days are the app's
  /// configured time zone's unless `tz` names one.
  public static func report(_ name: String, parameters: [String: String], origin: ReportOrigin, format: Format)
    async throws -> String
  {
    let parameters = try await zoned(parameters, origin: origin)
    let filter = try Report.filter { parameters[$0] }
    var settled = parameters
    settled["from"] = String(filter.from)
    settled["to"] = String(filter.to)
    let (json, result) = try await origin.report(name, parameters: settled)
    switch format {
    case .json: return String(decoding: json, as: UTF8.self) + "\n"
    case .csv: return result.table.csv
    case .table:
      var text = heading(filter) + result.table.text()
      if let rows = result as? EventRows, let next = rows.next { text += "next page: --after \(next)\n" }
      return text
    }
  }

  /// The line a table starts with: the app and the range it covers in the report's time zone, the
  /// end not included.
  static func heading(_ filter: ReportFilter) -> String {
    let zone = filter.zone
    let environment = filter.environment == AppEnvironment.production ? "" : " [\(filter.environment)]"
    return "\(filter.app)\(environment): \(zone.iso(filter.from)) to \(zone.iso(filter.to)) "
      + "(\(zone.identifier); the end not included)\n\n"
  }

  /// `parameters` with `tz` set to the app's configured zone when it names none, once the app is
  /// known to have events (``ReportOrigin/requireEvents(of:)``).
  static func zoned(_ parameters: [String: String], origin: ReportOrigin) async throws -> [String: String] {
    guard let app = parameters["app"], !app.isEmpty else { throw FieldError(field: "app", reason: "is required") }
    let configured = try await origin.requireEvents(of: app)
    var zoned = parameters
    if zoned["tz"] == nil { zoned["tz"] = configured }
    return zoned
  }

  // MARK: Keys

  /// Creates a key for `app` (`*` for an admin key) and returns it: it is shown once, only its hash
  /// is stored.
  public static func createKey(app: String, scope: KeyRecord.Scope, store: any EventStore) async throws -> String {
    guard !app.isEmpty, app.utf8.count <= 256 else { throw CommandError("--app must be 1 to 256 bytes") }
    if scope == .write {
      do {
        try AppEnvironment.checkTarget(app, field: "--app")
      } catch {
        throw CommandError("--app: \(error.reason)")
      }
    }
    let key = AccessKeys.generate(scope: scope)
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    let record = AccessKeys.record(for: key, app: scope == .write ? app : "*", scope: scope, now: now)
    try await store.saveKey(record)
    try await store.appendAudit(
      AuditEntry(time: now, actor: "trackerctl", action: "key-create", detail: "\(scope.rawValue) key \(record.id)"))
    return key
  }

  /// The form of `key` the collector's configuration takes instead of the key itself
  /// (`sha256:<64 hex digits>`): whoever reads the configuration then learns no key.
  public static func hashedKey(_ key: String) -> String { AccessKeys.hashedPrefix + AccessKeys.hash(key) }

  /// The keys as a table: id, app, scope, created, revoked.
  public static func listKeys(store: any EventStore) async throws -> ReportTable {
    ReportTable(
      columns: ["id", "app", "scope", "created", "revoked"],
      rows: try await store.keys().map {
        [$0.id, $0.app, $0.scope.rawValue, ReportTime.iso($0.createdAt), $0.revokedAt.map(ReportTime.iso) ?? ""]
      })
  }

  /// Revokes the key with `id`; throws when there is none.
  public static func revokeKey(id: String, store: any EventStore) async throws {
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    guard try await store.revokeKey(id: id, at: now) else {
      throw CommandError("no active key has the id \(id) (trackerctl keys list shows them)")
    }
    try await store.appendAudit(AuditEntry(time: now, actor: "trackerctl", action: "key-revoke", detail: "key \(id)"))
  }

  // MARK: Export

  /// Writes every event of the filter's range to `output`, oldest page last (the API's order:
  /// newest first), as NDJSON (one object per event) or CSV; `progress` gets (written, total).
  /// Returns the number of events written.
  @discardableResult
  public static func export(
    parameters: [String: String], origin: ReportOrigin, format: Format, to output: (String) throws -> Void,
    progress: (Int, Int) -> Void = { _, _ in }
  ) async throws -> Int {
    guard format != .table else { throw CommandError("--format must be ndjson or csv") }
    let parameters = try await zoned(parameters, origin: origin)
    let overview = try await origin.report("overview", parameters: parameters).result as? Overview
    let total = Int(overview?.current.events ?? 0)
    var written = 0
    var cursor: String?
    var first = true
    repeat {
      var page = parameters
      page["limit"] = "1000"
      page.removeValue(forKey: "event")
      if let cursor { page["after"] = cursor }
      guard let rows = try await origin.report("events", parameters: page).result as? EventRows else { break }
      if format == .csv {
        var csv = rows.everyField.csv
        if !first, let header = csv.range(of: "\r\n") { csv.removeSubrange(csv.startIndex..<header.upperBound) }
        try output(csv)
      } else {
        try output(try rows.rows.map(ndjsonLine).joined())
      }
      first = false
      written += rows.rows.count
      progress(written, max(total, written))
      cursor = rows.next
    } while cursor != nil
    return written
  }

  /// One exported event as a JSON line: every stored field (the context under `context`, keyed as
  /// the wire names it), the parameters as JSON (lists and objects included), not as a string.
  static func ndjsonLine(_ row: EventRows.Row) throws -> String {
    var object: [String: Any] = [
      "time": ReportTime.iso(row.occurredAt), "name": row.name, "kind": row.kind, "eventId": row.eventID,
      "deviceId": row.deviceID, "utcOffsetMinutes": row.utcOffsetMinutes, "receivedAt": ReportTime.iso(row.receivedAt),
      "context": Dictionary(uniqueKeysWithValues: row.context.fields.map { ($0.field.rawValue, $0.value) }),
      "parameters": (try? JSONSerialization.jsonObject(with: Data((row.parameters.text ?? "{}").utf8))) ?? [:],
    ]
    if let user = row.userID { object["userId"] = user }
    if let session = row.sessionID { object["sessionId"] = session }
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  /// A progress bar for a terminal: `[#####-----]  50%  5,000/10,000`.
  public static func progressBar(_ done: Int, _ total: Int, width: Int = 30) -> String {
    let share = total == 0 ? 1 : min(1, Double(done) / Double(total))
    let filled = Int((share * Double(width)).rounded(.down))
    return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
      + String(format: "%3d%%  %d/%d", Int(share * 100), done, total)
  }
}
