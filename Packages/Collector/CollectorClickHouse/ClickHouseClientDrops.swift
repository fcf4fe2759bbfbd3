public import CollectorStore
import Foundation

/// Client drop reports on ClickHouse (migration 5). Rows are appended; a line sent again has the
/// same key (app, report, service, reason), and reads take each key once (`any` over the group), so
/// the answer does not depend on when merges run.
extension ClickHouseEventStore {
  func insertClientDrops(_ batch: StoreBatch) async throws {
    guard !batch.clientDrops.isEmpty else { return }
    let rows: [[String: Any]] = batch.clientDrops.map { drop in
      [
        "app": drop.app, "report_id": drop.reportID, "service": drop.service, "reason": drop.reason,
        "count": drop.count, "device_id": drop.deviceID, "app_name": drop.appName, "app_version": drop.appVersion,
        "platform": drop.platform, "reported_at": drop.reportedAt, "received_at": drop.receivedAt,
      ]
    }
    try await insert(into: schema.clientDrops, ClickHouseRows.columns(rows), ClickHouseRows.body(rows))
  }

  /// One row per key, within the range.
  private func uniqueDrops(_ app: String, _ from: Int64, _ to: Int64, _ appName: String?) -> String {
    let name = appName.map { " AND app_name = \(ClickHouseSQL.literal($0))" } ?? ""
    return """
      (SELECT report_id, service, reason, any(count) AS count, any(device_id) AS device_id FROM \(schema.clientDrops)
       WHERE app = \(ClickHouseSQL.literal(app)) AND received_at >= \(ClickHouseSQL.literal(from))
       AND received_at < \(ClickHouseSQL.literal(to))\(name) GROUP BY report_id, service, reason)
      """
  }

  public func clientDrops(app: String, from: Int64, to: Int64, appName: String?) async throws -> [ClientDropTotal] {
    let sql = ClientDropSQL.clickHouse.totals(uniqueDrops(app, from, to, appName), where: "1")
    return try await client.rows(sql).map { row in
      ClientDropTotal(
        service: row["service"].text ?? "", reason: row["reason"].text ?? "", count: row["total"].int ?? 0,
        devices: row["devices"].int ?? 0)
    }
  }

  public func clientDropDevices(app: String, from: Int64, to: Int64, appName: String?) async throws -> Int64 {
    let sql = ClientDropSQL.clickHouse.deviceCount(uniqueDrops(app, from, to, appName), where: "1")
    return try await client.rows(sql).first?["devices"].int ?? 0
  }
}
