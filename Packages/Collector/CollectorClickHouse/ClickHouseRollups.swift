import CollectorReports
import CollectorStore

/// The activity rollups of ClickHouse (migration 6): the SQL stores' two rollups
/// (``RollupTables``), kept by ClickHouse itself. A materialised view on the events table turns
/// every inserted block into rollup rows, so they are current the moment an insert answers.
///
/// - `activity`: an `AggregatingMergeTree` per app, hour, device, session and (platform, app
///   version, OS version): the events (`sum`), the first and the last event time (`min`, `max`).
///   Overview, time series, breakdowns, active users, retention and sessions read it.
/// - `activity_names`: a `SummingMergeTree` per app, hour, event name, device and the same three
///   dimensions: the events. Top events and one event's time series read it.
///
/// Both keep `device`, a 64-bit hash of the device id, beside it: distinct devices are counted
/// over the hash (a hash set of integers instead of strings, nearly 4× faster at 10M events). Two
/// devices of one app with the same hash would count once: at a million devices the chance is 3 in
/// 10^8. Reports that read the events or the commerce facts count devices, sessions and orders by
/// the same hash, so every path gives the same answer.
///
/// Exact under duplicates: a resent event is never inserted (writes skip stored ids), and device
/// sets and times do not change with a copy. An event two collectors insert at the same instant is
/// counted twice: the write that finds the copy (``ClickHouseEventStore/removeDuplicates(of:)``)
/// merges it away and reconciles the merged months (``ClickHouseEventStore/reconcileRollups(months:)``:
/// each hour whose counts differ from the events' is rebuilt from them and checked again); a copy a
/// background merge removed unseen is found by the same reconciliation, which every collector runs
/// every five minutes (``ClickHouseEventStore/reconcile()``). Erasure and retention rebuild what
/// they touch.
extension ClickHouseSchema {
  /// The rollup tables of migration 6.
  static let rollups = [
    Table(
      name: "activity",
      columns: """
        app String, hour Int64, device_id String, device UInt64, session_key String, platform String,
        app_version String, os_version String, events AggregateFunction(sum, UInt64),
        first_ms AggregateFunction(min, Int64), last_ms AggregateFunction(max, Int64)
        """,
      engine: """
        AggregatingMergeTree PARTITION BY toYYYYMM(\(day("hour")))
        ORDER BY (app, hour, device_id, device, session_key, platform, app_version, os_version)
        """,
      shardBy: "cityHash64(device_id)"),
    Table(
      name: "activity_names",
      columns: """
        app String, hour Int64, name String, device UInt64, device_id String, platform String, app_version String,
        os_version String, events UInt64
        """,
      engine: """
        SummingMergeTree(events) PARTITION BY toYYYYMM(\(day("hour")))
        ORDER BY (app, hour, name, device, device_id, platform, app_version, os_version)
        """,
      shardBy: "cityHash64(device_id)"),
  ]

  /// The hour (UTC, ms) of the event time column, as the SQL rollups compute it.
  static let hour = "intDiv(occurred_at, \(RollupTables.hour)) * \(RollupTables.hour)"

  /// The `SELECT` turning the events of `source` that match `condition` into rows of the rollup
  /// `table` (`activity` or `activity_names`): what the views, the backfill and every repair run.
  static func rollupRows(of table: String, from source: String, where condition: String) -> String {
    let dimensions = "platform, app_version, os_version"
    if table == "activity_names" {
      return """
        SELECT app, \(hour) AS hour, name, cityHash64(device_id) AS device, device_id, \(dimensions),
          count() AS events
        FROM \(source) WHERE \(condition) GROUP BY app, hour, name, device, device_id, \(dimensions)
        """
    }
    return """
      SELECT app, \(hour) AS hour, device_id, cityHash64(device_id) AS device,
        ifNull(toString(session_id), '') AS session_key, \(dimensions), sumState(toUInt64(1)) AS events,
        minState(occurred_at) AS first_ms, maxState(occurred_at) AS last_ms
      FROM \(source) WHERE \(condition) GROUP BY app, hour, device_id, device, session_key, \(dimensions)
      """
  }

  /// Migration 6: the rollups, the views feeding them from each server's events, and the rollup
  /// rows of the events stored before. Run it before writes resume: an event inserted between a
  /// view's creation and its backfill would be rolled up twice.
  var rollupMigration: [String] {
    Self.rollups.flatMap(create) + rollupFeeds
      + Self.rollups.map { table in
        // Grouping a large store's events spills to disk past 1 GB instead of failing.
        "INSERT INTO \(local(table.name)) " + Self.rollupRows(of: table.name, from: local("events"), where: "1")
          + " SETTINGS max_bytes_before_external_group_by = 1000000000"
      }
  }

  /// The materialised views feeding each rollup from the server's events (`<rollup>_feed`).
  var rollupFeeds: [String] {
    Self.rollups.map { table in
      "CREATE MATERIALIZED VIEW IF NOT EXISTS \(database).\(table.name)_feed TO \(local(table.name)) AS "
        + Self.rollupRows(of: table.name, from: local("events"), where: "1")
    }
  }
}

extension ClickHouseEventStore {
  /// Rebuilds the rollup rows matching `rollupCondition` (over `app`, `hour`, `device_id`) from the
  /// events matching `eventCondition` (the same events: their hours and devices), on every server,
  /// until the rollups hold exactly those events; throws ``StoreError/unavailable(_:)`` when they
  /// still disagree after five rounds (the write or the deletion is not acknowledged and is retried).
  func rebuildRollups(where rollupCondition: String, events eventCondition: String) async throws {
    // Before and after, failed or not: no build of the closed days made from the rows in between is
    // ever read (``invalidateClosedDays()``).
    try await invalidateClosedDays()
    do {
      try await rebuildRollupRows(where: rollupCondition, events: eventCondition)
    } catch {
      try? await invalidateClosedDays()
      throw error
    }
    try await invalidateClosedDays()
  }

  private func rebuildRollupRows(where rollupCondition: String, events eventCondition: String) async throws {
    for round in 0..<5 {
      if round > 0 {
        if try await rollupsAgree(rollupCondition, eventCondition) { return }
        // Two writes repairing the same rows at once undo each other: wait a random while.
        try? await Task.sleep(for: .milliseconds(100 * round + Int.random(in: 0..<250)))
      }
      for server in servers {
        for table in ClickHouseSchema.rollups {
          try await server.execute("ALTER TABLE \(schema.local(table.name)) DELETE WHERE \(rollupCondition)")
          try await waitForMutations(of: schema.local(table.name), on: server)
        }
      }
      for table in ClickHouseSchema.rollups {
        try await client.execute(
          "INSERT INTO \(schema.table(table.name)) "
            + ClickHouseSchema.rollupRows(of: table.name, from: schema.events, where: eventCondition),
          settings: ["insert_distributed_sync": "1"])
      }
    }
    if try await !rollupsAgree(rollupCondition, eventCondition) {
      throw StoreError.unavailable("ClickHouse's rollups still disagree with the events after rebuilding; retry")
    }
  }

  /// Compares the rollups with the events of the month partitions `months` (`yyyymm`; every month
  /// when `nil`): per app and day, then per hour in the days that differ, and rebuilds each hour that
  /// differs. Only event counts can differ (a copy merged away after the views counted it; device
  /// sets and times are the same with or without it). Returns the number of hours rebuilt.
  @discardableResult
  package func reconcileRollups(months: Set<Int64>? = nil) async throws -> Int {
    let list = months.map { "(\($0.sorted().map(String.init).joined(separator: ", ")))" }
    let hourDay = ClickHouseSchema.day("hour")
    func dayDifferences() async throws -> [(app: String, key: String)] {
      try await differences(
        events: "SELECT app, toString(day) AS k, toInt64(count()) AS n FROM \(schema.events) "
          + "WHERE 1\(list.map { " AND toYYYYMM(day) IN \($0)" } ?? "") GROUP BY app, k",
        key: "toString(\(hourDay))", where: list.map { " AND toYYYYMM(\(hourDay)) IN \($0)" } ?? "")
    }
    // A write in flight shows its events before its rollup rows: only what differs twice, a second
    // apart, is rebuilt.
    var days = try await dayDifferences()
    if !days.isEmpty {
      try await Task.sleep(for: .seconds(1))
      let again = Set(try await dayDifferences().map { "\($0.app)\u{0}\($0.key)" })
      days = days.filter { again.contains("\($0.app)\u{0}\($0.key)") }
    }
    var rebuilt = 0
    for (app, day) in days {
      let scope = "app = \(ClickHouseSQL.literal(app))"
      let inDay = "\(hourDay) = \(ClickHouseSQL.literal(day))"
      let hours = try await differences(
        events: "SELECT app, toString(\(ClickHouseSchema.hour)) AS k, toInt64(count()) AS n FROM \(schema.events) "
          + "WHERE \(scope) AND day = \(ClickHouseSQL.literal(day)) GROUP BY app, k",
        key: "toString(hour)", where: " AND \(scope) AND \(inDay)"
      ).map(\.key)
      guard !hours.isEmpty else { continue }
      let list = "(\(hours.joined(separator: ", ")))"
      try await rebuildRollups(
        where: "\(scope) AND hour IN \(list)",
        events: "\(scope) AND day = \(ClickHouseSQL.literal(day)) AND \(ClickHouseSchema.hour) IN \(list)")
      rebuilt += hours.count
    }
    return rebuilt
  }

  /// The (app, key) pairs whose event count in `events` (rows `app`, `k`, `n`) differs from either
  /// rollup's, grouped by `key` (an expression over `hour`) among the rollup rows matching `condition`.
  private func differences(events: String, key: String, where condition: String) async throws
    -> [(app: String, key: String)]
  {
    func counts(_ sql: String) async throws -> [String: Int64] {
      var counts: [String: Int64] = [:]
      for row in try await client.rows(sql) {
        counts["\(row["app"].text ?? "")\u{0}\(row["k"].text ?? "")"] = row["n"].int ?? 0
      }
      return counts
    }
    let stored = try await counts(events)
    let sessions = try await counts(
      "SELECT app, \(key) AS k, toInt64(sumMerge(events)) AS n FROM \(schema.table("activity")) WHERE 1\(condition) "
        + "GROUP BY app, k")
    let names = try await counts(
      "SELECT app, \(key) AS k, toInt64(sum(events)) AS n FROM \(schema.table("activity_names")) WHERE 1\(condition) "
        + "GROUP BY app, k")
    let keys = Set(stored.keys).union(sessions.keys).union(names.keys)
    return keys.filter { stored[$0] != sessions[$0] || stored[$0] != names[$0] }.sorted().map { key in
      let parts = key.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
      return (parts[0], parts.count > 1 ? parts[1] : "")
    }
  }

  public func reconcile() async throws -> Int { try await reconcileRollups() }

  /// Whether both rollups count, in `rollupCondition`, exactly the events of `eventCondition`.
  private func rollupsAgree(_ rollupCondition: String, _ eventCondition: String) async throws -> Bool {
    let row = try await client.rows(
      """
      SELECT (SELECT toInt64(count()) FROM \(schema.events) WHERE \(eventCondition)) AS e,
        (SELECT toInt64(sumMerge(events)) FROM \(schema.table("activity")) WHERE \(rollupCondition)) AS s,
        (SELECT toInt64(sum(events)) FROM \(schema.table("activity_names")) WHERE \(rollupCondition)) AS n
      """
    ).first
    let events = row?["e"].int ?? -1
    return row?["s"].int == events && row?["n"].int == events
  }
}
