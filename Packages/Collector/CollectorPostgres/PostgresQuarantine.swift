public import CollectorStore
import Logging
import PostgresNIO

/// The quarantine and the SimpleAnalytics submission memory in PostgreSQL (migration 6).
extension PostgresTables {
  /// The submissions a device keeps: older ones are deleted as new ones are written.
  static let submissionsKept = 16

  var quarantineMigration: [String] {
    [
      """
      CREATE TABLE \(quarantine) (
        id text PRIMARY KEY, app text NOT NULL, route text NOT NULL, received_at bigint NOT NULL, entry text NOT NULL,
        truncated boolean NOT NULL, reasons text NOT NULL, replayed_at bigint
      )
      """,
      "CREATE INDEX quarantine_app_received ON \(quarantine) (app, received_at)",
      """
      CREATE TABLE \(submissions) (
        app text NOT NULL, device_id text NOT NULL, received_at bigint NOT NULL, items text NOT NULL,
        counters text NOT NULL, seq bigserial
      )
      """,
      "CREATE INDEX submissions_device ON \(submissions) (app, device_id, received_at)",
    ]
  }

  /// Writes the batch's quarantined entries (an id kept before is kept once) and submissions, in
  /// the batch's transaction.
  func insertQuarantine(_ batch: StoreBatch, on connection: PostgresConnection, logger: Logger) async throws {
    for entry in batch.quarantined {
      try await connection.query(
        """
        INSERT INTO \(unescaped: quarantine) (id, app, route, received_at, entry, truncated, reasons, replayed_at)
        VALUES (\(entry.id), \(entry.app), \(entry.route), \(entry.receivedAt), \(entry.entry), \(entry.isTruncated),
        \(entry.reasonText), \(entry.replayedAt)) ON CONFLICT (id) DO NOTHING
        """, logger: logger)
    }
    for submission in batch.submissions {
      var binds = PostgresBindings()
      binds.append(submission.app)
      binds.append(submission.deviceID)
      binds.append(submission.receivedAt)
      binds.append(StoredSubmission.text(submission.items))
      binds.append(StoredSubmission.text(submission.counters))
      binds.append(Int64(Self.submissionsKept))
      try await connection.query(
        PostgresQuery(
          unsafeSQL: """
            WITH added AS (
              INSERT INTO \(submissions) (app, device_id, received_at, items, counters) VALUES ($1, $2, $3, $4, $5)
            )
            DELETE FROM \(submissions) WHERE app = $1 AND device_id = $2 AND seq NOT IN (
              SELECT seq FROM \(submissions) WHERE app = $1 AND device_id = $2 ORDER BY received_at DESC, seq DESC LIMIT $6 - 1)
            """, binds: binds), logger: logger)
    }
  }
}

extension PostgresEventStore {
  public func quarantined(app: String?, limit: Int, includeReplayed: Bool) async throws -> [QuarantinedEntry] {
    try await guarded {
      var binds = PostgresBindings()
      var conditions: [String] = []
      if let app {
        binds.append(app)
        conditions.append("app = $1")
      }
      if !includeReplayed { conditions.append("replayed_at IS NULL") }
      binds.append(Int64(max(0, limit)))
      let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
      let rows = try await client.query(
        PostgresQuery(
          unsafeSQL: "SELECT id, app, route, received_at, entry, truncated, reasons, replayed_at FROM "
            + "\(tables.quarantine) \(filter) ORDER BY received_at DESC, id LIMIT $\(app == nil ? 1 : 2)",
          binds: binds), logger: logger)
      var entries: [QuarantinedEntry] = []
      for try await (id, app, route, received, entry, truncated, reasons, replayed) in rows.decode(
        (String, String, String, Int64, String, Bool, String, Int64?).self)
      {
        var value = QuarantinedEntry(
          id: id, app: app, route: route, receivedAt: received, entry: entry,
          reasons: QuarantinedEntry.reasons(from: reasons), replayedAt: replayed)
        value.isTruncated = truncated
        entries.append(value)
      }
      return entries
    }
  }

  public func quarantinedCount(app: String, from: Int64, to: Int64) async throws -> Int {
    try await guarded {
      try await Self.count(
        client.query(
          """
          SELECT count(*)::bigint FROM \(unescaped: tables.quarantine) WHERE app = \(app) AND received_at >= \(from)
          AND received_at < \(to) AND replayed_at IS NULL
          """, logger: logger))
    }
  }

  public func resolveQuarantined(id: String, replayedAt: Int64?, reasons: [String]) async throws {
    let text = reasons.joined(separator: "\n")
    _ = try await guarded {
      try await client.query(
        "UPDATE \(unescaped: tables.quarantine) SET replayed_at = \(replayedAt), reasons = \(text) WHERE id = \(id)",
        logger: logger)
    }
  }

  public func purgeQuarantine(app: String?, before: Int64) async throws -> Int {
    try await guarded {
      var binds = PostgresBindings()
      binds.append(before)
      if let app { binds.append(app) }
      let sql =
        "WITH gone AS (DELETE FROM \(tables.quarantine) WHERE received_at < $1"
        + (app == nil ? "" : " AND app = $2") + " RETURNING 1) SELECT count(*)::bigint FROM gone"
      return try await Self.count(client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger))
    }
  }

  public func recentSubmissions(app: String, deviceID: String, limit: Int) async throws -> [StoredSubmission] {
    try await guarded {
      let rows = try await client.query(
        """
        SELECT received_at, items, counters FROM \(unescaped: tables.submissions) WHERE app = \(app)
        AND device_id = \(deviceID) ORDER BY received_at DESC, seq DESC LIMIT \(Int64(max(0, limit)))
        """, logger: logger)
      var found: [StoredSubmission] = []
      for try await (received, items, counters) in rows.decode((Int64, String, String).self) {
        found.append(
          StoredSubmission(
            app: app, deviceID: deviceID, receivedAt: received, items: StoredSubmission.entries(items),
            counters: StoredSubmission.entries(counters)))
      }
      return found
    }
  }
}
