public import CollectorStore
import Logging
import PostgresNIO

/// Client drop reports in PostgreSQL (migration 7): one row per app, report, service and reason.
extension PostgresTables {
  var clientDrops: String { "\"\(schema)\".client_drops" }

  var clientDropsMigration: [String] {
    [
      """
      CREATE TABLE \(clientDrops) (
        app text NOT NULL, report_id text NOT NULL, service text NOT NULL, reason text NOT NULL, count bigint NOT NULL,
        device_id text NOT NULL, app_name text NOT NULL, app_version text NOT NULL, platform text NOT NULL,
        reported_at bigint NOT NULL, received_at bigint NOT NULL,
        PRIMARY KEY (app, report_id, service, reason)
      )
      """,
      "CREATE INDEX client_drops_received ON \(clientDrops) (app, received_at)",
    ]
  }

  /// Writes the batch's drop lines in its transaction (a line kept before is kept once).
  func insertClientDrops(_ batch: StoreBatch, on connection: PostgresConnection, logger: Logger) async throws {
    for drop in batch.clientDrops {
      _ = try await connection.query(
        """
        INSERT INTO \(unescaped: clientDrops) (app, report_id, service, reason, count, device_id, app_name,
          app_version, platform, reported_at, received_at) VALUES (\(drop.app), \(drop.reportID), \(drop.service),
          \(drop.reason), \(drop.count), \(drop.deviceID), \(drop.appName), \(drop.appVersion), \(drop.platform),
          \(drop.reportedAt), \(drop.receivedAt))
        ON CONFLICT (app, report_id, service, reason) DO NOTHING
        """, logger: logger)
    }
  }

  static func clientDropFilter(_ app: String, _ from: Int64, _ to: Int64, _ appName: String?)
    -> (String, PostgresBindings)
  {
    var binds = PostgresBindings()
    binds.append(app)
    binds.append(from)
    binds.append(to)
    if let appName { binds.append(appName) }
    return ("app = $1 AND received_at >= $2 AND received_at < $3" + (appName == nil ? "" : " AND app_name = $4"), binds)
  }
}

extension PostgresEventStore {
  public func clientDrops(app: String, from: Int64, to: Int64, appName: String?) async throws -> [ClientDropTotal] {
    try await guarded {
      let (condition, binds) = PostgresTables.clientDropFilter(app, from, to, appName)
      let sql = ClientDropSQL.postgres.totals(tables.clientDrops, where: condition)
      let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
      var totals: [ClientDropTotal] = []
      for try await (service, reason, total, devices) in rows.decode((String, String, Int64, Int64).self) {
        totals.append(ClientDropTotal(service: service, reason: reason, count: total, devices: devices))
      }
      return totals
    }
  }

  public func clientDropDevices(app: String, from: Int64, to: Int64, appName: String?) async throws -> Int64 {
    try await guarded {
      let (condition, binds) = PostgresTables.clientDropFilter(app, from, to, appName)
      let sql = ClientDropSQL.postgres.deviceCount(tables.clientDrops, where: condition)
      let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
      for try await devices in rows.decode(Int64.self) { return devices }
      return 0
    }
  }
}
