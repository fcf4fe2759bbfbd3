public import CollectorStore
import Foundation

/// Erasure, retention and keys on ClickHouse.
///
/// Reads of `keys` and `counters` with `FINAL` always select the version column (`version`,
/// `count`): through a `Distributed` table 18.16 fails a `FINAL` read that leaves it out.
///
/// Deleting is an `ALTER TABLE … DELETE` mutation, which ClickHouse runs in the background; each call
/// here waits until the mutations of its table are done, so when it returns the rows are gone from
/// every read. Retention drops whole monthly partitions when every row in them is past every
/// cut-off, and deletes the rest with a mutation.
extension ClickHouseEventStore {
  /// Erases a device, or a person (every device they own, and their events on shared devices: see
  /// ``ErasureSubject``).
  public func erase(_ subject: ErasureSubject) async throws -> ErasureReport {
    let app = "app = \(ClickHouseSQL.literal(subject.app))"
    var report = ErasureReport()
    var owned: [String] = subject.deviceID.map { [$0] } ?? []
    var erased = Set<ExactText>()
    if let user = subject.userID {
      for (device, first) in try await personDevices(app: app, user: user) {
        if first.hasSameBytes(as: user) { owned.append(device) }
        erased.insert(ExactText(device))
      }
      // Never a Nullable condition in a mutation: on 18.16 a row where it is NULL (no user) is deleted.
      let theirs = "\(app) AND ifNull(user_id = \(ClickHouseSQL.literal(user)), 0)"
      report.events += try await deleteEvents(where: theirs, facts: theirs)
    }
    if !owned.isEmpty {
      let devices = "\(app) AND device_id IN \(ClickHouseSQL.list(owned.distinctBytes()))"
      let holding = try await client.rows(
        """
        SELECT DISTINCT device_id FROM \(schema.table("events")) WHERE \(devices)
        UNION ALL SELECT DISTINCT device_id FROM \(schema.table("counters")) WHERE \(devices)
        """)
      erased.formUnion(holding.compactMap { $0["device_id"].text.map { ExactText($0) } })
      report.events += try await deleteEvents(where: devices, facts: devices)
      report.counters += try await delete(from: "counters", where: devices)
      _ = try await delete(from: "persons", where: devices)
    }
    if !erased.isEmpty {
      let devices = "\(app) AND device_id IN \(ClickHouseSQL.list(erased.map(\.text)))"
      try await rebuildRollups(where: devices, events: devices)
      try await repairFirstSeen(where: devices, recheck: devices)
    }
    report.devices = erased.count
    return report
  }

  /// The devices with an event of `user`, each with its first identified user by event time (ties
  /// broken by event id).
  private func personDevices(app: String, user: String) async throws -> [(String, String)] {
    let rows = try await client.rows(
      """
      SELECT device_id, argMin(uid, (occurred_at, event_id)) AS first_user
      FROM (SELECT device_id, assumeNotNull(user_id) AS uid, occurred_at, event_id FROM \(schema.table("events"))
            WHERE \(app) AND isNotNull(user_id) AND device_id IN
              (SELECT device_id FROM \(schema.table("events")) WHERE \(app)
               AND ifNull(user_id = \(ClickHouseSQL.literal(user)), 0)))
      GROUP BY device_id ORDER BY device_id
      """,
      // One device's events are on one shard: each shard answers the inner look-up from its own.
      settings: ["distributed_product_mode": "local"])
    return rows.compactMap { row in
      guard let device = row["device_id"].text, let first = row["first_user"].text else { return nil }
      return (device, first)
    }
  }

  public func prune(_ policy: PruneCutoffs) async throws -> Int {
    var deleted = 0
    for (app, cutoff) in policy.perApp.sorted(by: { $0.key < $1.key }) {
      let app = "app = \(ClickHouseSQL.literal(app))"
      let before = ClickHouseSQL.literal(cutoff)
      let events = try await deleteEvents(
        where: "\(app) AND occurred_at < \(before)", facts: "\(app) AND t < \(before)")
      if events > 0 { try await rebuildRollups(before: cutoff, app) }
      deleted += try await delete(from: "counters", where: "\(app) AND first_counted_at < \(before)") + events
    }
    if let cutoff = policy.defaultCutoff {
      let others =
        policy.perApp.isEmpty ? "" : " AND app NOT IN \(ClickHouseSQL.list(policy.perApp.keys.sorted()))"
      var events = 0
      if policy.perApp.values.allSatisfy({ $0 >= cutoff }) {
        events += try await dropPartitions(before: cutoff)
      }
      let before = ClickHouseSQL.literal(cutoff)
      events += try await deleteEvents(where: "occurred_at < \(before)\(others)", facts: "t < \(before)\(others)")
      if events > 0 { try await rebuildRollups(before: cutoff, "1\(others)") }
      deleted += try await delete(from: "counters", where: "first_counted_at < \(before)\(others)") + events
    }
    return deleted
  }

  /// Rebuilds the rollup hours of the apps of `apps` (a condition) before `cutoff`'s next whole
  /// hour: those before it lose their rows, the hour holding it keeps the events left in it; then
  /// the first-seen times of the devices seen before `cutoff`, from the rebuilt rollup.
  private func rebuildRollups(before cutoff: Int64, _ apps: String) async throws {
    let hour = RollupSQL.hour(of: cutoff)
    let end = ClickHouseSQL.literal(hour == cutoff ? hour : hour + RollupTables.hour)
    try await rebuildRollups(where: "\(apps) AND hour < \(end)", events: "\(apps) AND occurred_at < \(end)")
    try await repairFirstSeen(
      where: "\(apps) AND seen_ms < \(ClickHouseSQL.literal(cutoff))", recheck: "\(apps) AND hour < \(end)")
  }

  /// Deletes the events matching `condition` and the commerce facts matching `facts` (the same
  /// events' facts); returns the number of events.
  private func deleteEvents(where condition: String, facts: String) async throws -> Int {
    for table in ["orders", "items"] { _ = try await delete(from: table, where: facts) }
    return try await delete(from: "events", where: condition)
  }

  /// Drops the monthly partitions of events whose every row is before `cutoff` (a cut-off every app
  /// has reached): cheaper than a mutation, and what the partitioning is for.
  private func dropPartitions(before cutoff: Int64) async throws -> Int {
    let parts = try await client.rows(
      "SELECT partition, toInt64(count()) AS n FROM (SELECT toYYYYMM(day) AS partition, occurred_at FROM \(schema.events)) "
        + "GROUP BY partition HAVING max(occurred_at) < \(ClickHouseSQL.literal(cutoff)) ORDER BY partition")
    var dropped = 0
    if !parts.isEmpty { try await invalidateClosedDays() }
    for part in parts {
      guard let partition = part["partition"].int else { continue }
      let rows = try await client.rows(
        "SELECT toInt64(count()) AS n FROM \(schema.events) FINAL WHERE toYYYYMM(day) = \(partition)")
      for server in servers {
        for table in ["orders", "items", "events"] + ClickHouseSchema.rollups.map(\.name) {
          try await server.execute("ALTER TABLE \(schema.local(table)) DROP PARTITION \(partition)")
        }
      }
      dropped += Int(rows.first?["n"].int ?? 0)
    }
    if !parts.isEmpty { try await invalidateClosedDays() }
    return dropped
  }

  /// Deletes the rows of the table `name` matching `condition` on every server and waits for the
  /// mutations; returns how many rows (each event or counter id once) it removed.
  func delete(from name: String, where condition: String) async throws -> Int {
    let found = try await client.rows(
      "SELECT toInt64(count()) AS n FROM (SELECT * FROM \(schema.table(name)) FINAL WHERE \(condition))")
    let count = Int(found.first?["n"].int ?? 0)
    guard count > 0 else { return 0 }
    for server in servers {
      try await server.execute("ALTER TABLE \(schema.local(name)) DELETE WHERE \(condition)")
      try await waitForMutations(of: schema.local(name), on: server)
    }
    return count
  }

  /// Waits until `server` finished every mutation of `table` (at most ten minutes).
  func waitForMutations(of table: String, on server: ClickHouseClient) async throws {
    let name = table.split(separator: ".").last.map(String.init) ?? table
    let deadline = ContinuousClock.now + .seconds(600)
    while ContinuousClock.now < deadline {
      let pending = try await server.rows(
        "SELECT toInt64(count()) AS n FROM system.mutations WHERE database = \(ClickHouseSQL.literal(schema.database)) "
          + "AND table = \(ClickHouseSQL.literal(name)) AND is_done = 0")
      if (pending.first?["n"].int ?? 0) == 0 { return }
      try await Task.sleep(for: .milliseconds(20))
    }
    throw StoreError.unavailable("ClickHouse did not finish deleting from \(table) within 10 minutes")
  }

  public func saveKey(_ key: KeyRecord) async throws {
    let existing = try await client.rows(
      "SELECT id, version FROM \(schema.keys) FINAL WHERE hash = \(ClickHouseSQL.literal(key.hash)) LIMIT 1")
    guard existing.isEmpty else { return }
    try await insert(into: schema.keys, ClickHouseRows.keyColumns + ", version", ClickHouseRows.body(key, version: 1))
  }

  public func key(hash: String) async throws -> KeyRecord? {
    try await client.rows(
      "SELECT \(ClickHouseRows.keyColumns), version FROM \(schema.keys) FINAL WHERE hash = \(ClickHouseSQL.literal(hash)) LIMIT 1"
    ).first.flatMap(ClickHouseRows.key)
  }

  public func keys() async throws -> [KeyRecord] {
    try await client.rows(
      "SELECT \(ClickHouseRows.keyColumns), version FROM \(schema.keys) FINAL ORDER BY created_at DESC, id"
    ).compactMap(ClickHouseRows.key)
  }

  public func revokeKey(id: String, at time: Int64) async throws -> Bool {
    let rows = try await client.rows(
      "SELECT \(ClickHouseRows.keyColumns), version FROM \(schema.keys) FINAL WHERE id = \(ClickHouseSQL.literal(id))")
    guard let row = rows.first, var key = ClickHouseRows.key(row) else { return false }
    if key.revokedAt == nil {
      key.revokedAt = time
      let version = (row["version"].int ?? 1) + 1
      try await insert(
        into: schema.keys, ClickHouseRows.keyColumns + ", version", ClickHouseRows.body(key, version: version))
    }
    return true
  }
}
