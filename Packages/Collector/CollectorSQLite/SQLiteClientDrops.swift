public import CollectorStore
import GRDB

/// Client drop reports in the SQLite file (migration 7): one row per app, report, service and
/// reason (a report sent again is kept once).
enum SQLiteClientDrops {
  static let migration = """
    CREATE TABLE client_drops (
      app TEXT NOT NULL, report_id TEXT NOT NULL, service TEXT NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL,
      device_id TEXT NOT NULL, app_name TEXT NOT NULL, app_version TEXT NOT NULL, platform TEXT NOT NULL,
      reported_at INTEGER NOT NULL, received_at INTEGER NOT NULL,
      PRIMARY KEY (app, report_id, service, reason)
    );
    CREATE INDEX client_drops_received ON client_drops (app, received_at);
    """

  /// Writes the batch's drop lines in its transaction.
  static func insert(_ batch: StoreBatch, into db: Database) throws {
    for drop in batch.clientDrops {
      try db.execute(
        sql: """
          INSERT INTO client_drops (app, report_id, service, reason, count, device_id, app_name, app_version, platform,
            reported_at, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (app, report_id, service, reason) DO NOTHING
          """,
        arguments: [
          drop.app, drop.reportID, drop.service, drop.reason, drop.count, drop.deviceID, drop.appName, drop.appVersion,
          drop.platform, drop.reportedAt, drop.receivedAt,
        ])
    }
  }

  static func condition(_ appName: String?) -> String {
    "app = ? AND received_at >= ? AND received_at < ?" + (appName == nil ? "" : " AND app_name = ?")
  }

  static func arguments(_ app: String, _ from: Int64, _ to: Int64, _ appName: String?) -> StatementArguments {
    var arguments: StatementArguments = [app, from, to]
    if let appName { arguments += [appName] }
    return arguments
  }
}

extension SQLiteEventStore {
  public func clientDrops(app: String, from: Int64, to: Int64, appName: String?) async throws -> [ClientDropTotal] {
    try await run { [pool] in
      try pool.read { db in
        try Row.fetchAll(
          db, sql: ClientDropSQL.sqlite.totals("client_drops", where: SQLiteClientDrops.condition(appName)),
          arguments: SQLiteClientDrops.arguments(app, from, to, appName)
        ).map { row in
          ClientDropTotal(service: row["service"], reason: row["reason"], count: row["total"], devices: row["devices"])
        }
      }
    }
  }

  public func clientDropDevices(app: String, from: Int64, to: Int64, appName: String?) async throws -> Int64 {
    try await run { [pool] in
      try pool.read { db in
        try Int64.fetchOne(
          db, sql: ClientDropSQL.sqlite.deviceCount("client_drops", where: SQLiteClientDrops.condition(appName)),
          arguments: SQLiteClientDrops.arguments(app, from, to, appName)) ?? 0
      }
    }
  }
}
