public import CollectorStore
import Foundation

/// The quarantine and the SimpleAnalytics submission memory on ClickHouse (migration 4).
///
/// Quarantined entries are rewritten, never updated: the first write has version 1, a replay's
/// outcome a version from the time it was recorded, and reads take the newest with `FINAL` (so an
/// entry quarantined again by a retried request never undoes its replay). Submissions are appended;
/// reads take a device's newest.
extension ClickHouseEventStore {
  static let quarantineColumns = "id, app, route, received_at, entry, truncated, reasons, replayed_at, version"

  func insertQuarantine(_ batch: StoreBatch) async throws {
    if !batch.quarantined.isEmpty {
      let rows = batch.quarantined.map { Self.row($0, version: 1) }
      try await insert(into: schema.quarantine, ClickHouseRows.columns(rows), ClickHouseRows.body(rows))
    }
    if !batch.submissions.isEmpty {
      let rows: [[String: Any]] = batch.submissions.map { submission in
        [
          "app": submission.app, "device_id": submission.deviceID, "received_at": submission.receivedAt,
          "items": StoredSubmission.text(submission.items), "counters": StoredSubmission.text(submission.counters),
        ]
      }
      try await insert(into: schema.submissions, ClickHouseRows.columns(rows), ClickHouseRows.body(rows))
    }
  }

  static func row(_ entry: QuarantinedEntry, version: Int64) -> [String: Any] {
    [
      "id": entry.id, "app": entry.app, "route": entry.route, "received_at": entry.receivedAt, "entry": entry.entry,
      "truncated": entry.isTruncated ? 1 : 0, "reasons": entry.reasonText,
      "replayed_at": entry.replayedAt.map { $0 as Any } ?? NSNull(), "version": version,
    ]
  }

  public func quarantined(app: String?, limit: Int, includeReplayed: Bool) async throws -> [QuarantinedEntry] {
    var conditions: [String] = []
    if let app { conditions.append("app = \(ClickHouseSQL.literal(app))") }
    if !includeReplayed { conditions.append("isNull(replayed_at)") }
    let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    return try await client.rows(
      "SELECT \(Self.quarantineColumns) FROM \(schema.quarantine) FINAL \(filter) "
        + "ORDER BY received_at DESC, id LIMIT \(max(0, limit))"
    ).map { row in
      var entry = QuarantinedEntry(
        id: row["id"].text ?? "", app: row["app"].text ?? "", route: row["route"].text ?? "",
        receivedAt: row["received_at"].int ?? 0, entry: row["entry"].text ?? "",
        reasons: QuarantinedEntry.reasons(from: row["reasons"].text ?? ""), replayedAt: row["replayed_at"].int)
      entry.isTruncated = (row["truncated"].int ?? 0) != 0
      return entry
    }
  }

  public func quarantinedCount(app: String, from: Int64, to: Int64) async throws -> Int {
    let rows = try await client.rows(
      "SELECT toInt64(count()) AS n FROM (SELECT id, replayed_at, version FROM \(schema.quarantine) FINAL "
        + "WHERE app = \(ClickHouseSQL.literal(app)) AND received_at >= \(ClickHouseSQL.literal(from)) "
        + "AND received_at < \(ClickHouseSQL.literal(to))) WHERE isNull(replayed_at)")
    return Int(rows.first?["n"].int ?? 0)
  }

  public func resolveQuarantined(id: String, replayedAt: Int64?, reasons: [String]) async throws {
    let rows = try await client.rows(
      "SELECT \(Self.quarantineColumns) FROM \(schema.quarantine) FINAL WHERE id = \(ClickHouseSQL.literal(id)) LIMIT 1"
    )
    guard let row = rows.first else { return }
    var entry = QuarantinedEntry(
      id: id, app: row["app"].text ?? "", route: row["route"].text ?? "", receivedAt: row["received_at"].int ?? 0,
      entry: row["entry"].text ?? "", reasons: reasons, replayedAt: replayedAt)
    entry.isTruncated = (row["truncated"].int ?? 0) != 0
    let version = max((row["version"].int ?? 1) + 1, Int64(Date().timeIntervalSince1970 * 1000))
    let body = [Self.row(entry, version: version)]
    try await insert(into: schema.quarantine, ClickHouseRows.columns(body), ClickHouseRows.body(body))
  }

  public func purgeQuarantine(app: String?, before: Int64) async throws -> Int {
    let condition =
      "received_at < \(ClickHouseSQL.literal(before))" + (app.map { " AND app = \(ClickHouseSQL.literal($0))" } ?? "")
    return try await delete(from: "quarantine", where: condition)
  }

  public func recentSubmissions(app: String, deviceID: String, limit: Int) async throws -> [StoredSubmission] {
    try await client.rows(
      "SELECT received_at, items, counters FROM \(schema.submissions) WHERE app = \(ClickHouseSQL.literal(app)) "
        + "AND device_id = \(ClickHouseSQL.literal(deviceID)) ORDER BY received_at DESC LIMIT \(max(0, limit))"
    ).map { row in
      StoredSubmission(
        app: app, deviceID: deviceID, receivedAt: row["received_at"].int ?? 0,
        items: StoredSubmission.entries(row["items"].text ?? ""),
        counters: StoredSubmission.entries(row["counters"].text ?? ""))
    }
  }
}
