public import CollectorStore
import GRDB

/// The quarantine and the SimpleAnalytics submission memory in the SQLite file (migration 6).
enum SQLiteQuarantine {
  static let migration = """
    CREATE TABLE quarantine (
      id TEXT NOT NULL PRIMARY KEY,
      app TEXT NOT NULL,
      route TEXT NOT NULL,
      received_at INTEGER NOT NULL,
      entry TEXT NOT NULL,
      truncated INTEGER NOT NULL,
      reasons TEXT NOT NULL,
      replayed_at INTEGER
    );
    CREATE INDEX quarantine_app_received ON quarantine (app, received_at);
    CREATE TABLE submissions (
      app TEXT NOT NULL,
      device_id TEXT NOT NULL,
      received_at INTEGER NOT NULL,
      items TEXT NOT NULL,
      counters TEXT NOT NULL
    );
    CREATE INDEX submissions_device ON submissions (app, device_id, received_at);
    """

  /// The submissions a device keeps: older ones are deleted as new ones are written.
  static let submissionsKept = 16

  /// Writes the batch's quarantined entries (an id kept before is kept once) and submissions, in
  /// the batch's transaction.
  static func insert(_ batch: StoreBatch, into db: Database) throws {
    for entry in batch.quarantined {
      try db.execute(
        sql: """
          INSERT INTO quarantine (id, app, route, received_at, entry, truncated, reasons, replayed_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
          """,
        arguments: [
          entry.id, entry.app, entry.route, entry.receivedAt, entry.entry, entry.isTruncated, entry.reasonText,
          entry.replayedAt,
        ])
    }
    for submission in batch.submissions {
      try db.execute(
        sql: "INSERT INTO submissions (app, device_id, received_at, items, counters) VALUES (?, ?, ?, ?, ?)",
        arguments: [
          submission.app, submission.deviceID, submission.receivedAt, StoredSubmission.text(submission.items),
          StoredSubmission.text(submission.counters),
        ])
      try db.execute(
        sql: """
          DELETE FROM submissions WHERE app = ? AND device_id = ? AND rowid NOT IN (
            SELECT rowid FROM submissions WHERE app = ? AND device_id = ? ORDER BY received_at DESC, rowid DESC LIMIT ?)
          """,
        arguments: [submission.app, submission.deviceID, submission.app, submission.deviceID, submissionsKept])
    }
  }

  static func entry(_ row: Row) -> QuarantinedEntry {
    var entry = QuarantinedEntry(
      id: row["id"], app: row["app"], route: row["route"], receivedAt: row["received_at"], entry: row["entry"],
      reasons: QuarantinedEntry.reasons(from: row["reasons"]), replayedAt: row["replayed_at"])
    entry.isTruncated = row["truncated"]
    return entry
  }
}

extension SQLiteEventStore {
  public func quarantined(app: String?, limit: Int, includeReplayed: Bool) async throws -> [QuarantinedEntry] {
    try await run { [pool] in
      try pool.read { db in
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let app {
          conditions.append("app = ?")
          arguments += [app]
        }
        if !includeReplayed { conditions.append("replayed_at IS NULL") }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments += [max(0, limit)]
        return try Row.fetchAll(
          db, sql: "SELECT * FROM quarantine \(filter) ORDER BY received_at DESC, id LIMIT ?", arguments: arguments
        ).map(SQLiteQuarantine.entry)
      }
    }
  }

  public func quarantinedCount(app: String, from: Int64, to: Int64) async throws -> Int {
    try await run { [pool] in
      try pool.read { db in
        try Int.fetchOne(
          db,
          sql: "SELECT count(*) FROM quarantine WHERE app = ? AND received_at >= ? AND received_at < ? "
            + "AND replayed_at IS NULL", arguments: [app, from, to]) ?? 0
      }
    }
  }

  public func resolveQuarantined(id: String, replayedAt: Int64?, reasons: [String]) async throws {
    try await run { [pool] in
      try pool.write { db in
        try db.execute(
          sql: "UPDATE quarantine SET replayed_at = ?, reasons = ? WHERE id = ?",
          arguments: [replayedAt, reasons.joined(separator: "\n"), id])
      }
    }
  }

  public func purgeQuarantine(app: String?, before: Int64) async throws -> Int {
    try await run { [pool] in
      try pool.write { db in
        if let app {
          try db.execute(sql: "DELETE FROM quarantine WHERE app = ? AND received_at < ?", arguments: [app, before])
        } else {
          try db.execute(sql: "DELETE FROM quarantine WHERE received_at < ?", arguments: [before])
        }
        return db.changesCount
      }
    }
  }

  public func recentSubmissions(app: String, deviceID: String, limit: Int) async throws -> [StoredSubmission] {
    try await run { [pool] in
      try pool.read { db in
        try Row.fetchAll(
          db,
          sql: """
            SELECT * FROM submissions WHERE app = ? AND device_id = ? ORDER BY received_at DESC, rowid DESC LIMIT ?
            """,
          arguments: [app, deviceID, max(0, limit)]
        ).map { row in
          StoredSubmission(
            app: row["app"], deviceID: row["device_id"], receivedAt: row["received_at"],
            items: StoredSubmission.entries(row["items"]), counters: StoredSubmission.entries(row["counters"]))
        }
      }
    }
  }
}
