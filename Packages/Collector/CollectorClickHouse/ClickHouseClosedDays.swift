import CollectorReports
public import CollectorStore
import Foundation

/// The closed days of ClickHouse (migration 10): the rollups of up to 64 whole UTC days, built
/// once into tables no write touches, so that top events, sessions and the overview read a name's
/// devices, a session or a device as one row instead of grouping every hourly row of the range.
///
/// - `closed_name_devices`: one row per (build, app, name, device) with a 64-bit mask of the days
///   (from the build's first day) the device sent the name on.
/// - `closed_name_days`: the events per (build, app, day, name).
/// - `closed_devices`: one row per (build, app, device) with the mask of its days, and
///   `closed_day_events` the events per (build, app, day), both from the sessions as built.
/// - `closed_sessions`: one row per (build, app, day, session) from the `activity` rollup: its
///   device, first and last time and events that day, and whether that day is its only one in the
///   build.
/// - `closed_records` (on the server reads go to; migration 14, replacing migration 10's
///   `closed_builds`): one row per finished build, its first and last day and the format of what it
///   holds (``closedFormat``).
/// - `closed_drops` (the same): a row per invalidation; a build that sees their count change while
///   it runs throws itself away.
///
/// A build never changes: every build is a partition of its own, recorded once every table is
/// filled, and dropped two builds later. Reports read the newest recorded build of this schema's
/// ``closedFormat`` (an older one lacks tables they read) and take a day from
/// it only when the build's events of that day, in the names' totals and in the sessions', equal
/// the `activity` rollup's; every other hour of the range from the rollups
/// (`ClickHouseClosedDaysRead.swift`). A late event (one stored into a built day) is seen so: a
/// build's counts can only be lower than the rollups', since everything that removes rollup rows
/// (erasure, retention, a repair) invalidates every build before and after it
/// (``ClickHouseEventStore/invalidateClosedDays()``). On a cluster each server builds from its own
/// shard, as the rollups are sharded by device.
extension ClickHouseSchema {
  /// The built tables of migration 10.
  static let closedDays = [
    closed(
      "closed_name_days", "day Int64, name String, events UInt64", order: "day, name", shardBy: "cityHash64(name)"),
    closed("closed_name_devices", "name String, device UInt64, days UInt64", order: "name, device", shardBy: "device"),
    closed("closed_devices", "device UInt64, days UInt64", order: "device", shardBy: "device"),
    closed(
      "closed_sessions",
      "day Int64, session UInt64, device UInt64, keyed UInt8, alone UInt8, first_ms Int64, last_ms Int64, events UInt64",
      order: "day, session", shardBy: "device"),
    closed("closed_day_events", "day Int64, events UInt64", order: "day", shardBy: "day"),
  ]

  /// A table of builds: `columns` after the build and the app, each build a partition, sorted by
  /// the app and `order`.
  static func closed(_ name: String, _ columns: String, order: String, shardBy: String = "") -> Table {
    Table(
      name: name, columns: "build Int64, app String, \(columns)",
      engine: "MergeTree PARTITION BY build ORDER BY (app, \(order))", shardBy: shardBy)
  }

  /// Migration 10: the built tables, the builds and the invalidations.
  var closedDaysMigration: [String] {
    Self.closedDays.flatMap(create) + [
      "CREATE TABLE IF NOT EXISTS \(local("closed_builds")) (build Int64, first_day Int64, last_day Int64) "
        + "ENGINE = MergeTree ORDER BY build",
      "CREATE TABLE IF NOT EXISTS \(local("closed_drops")) (at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY at",
    ]
  }

  /// The statements filling build `id` of `days` from each server's own rollups, in order.
  func closedBuild(id: Int64, days: ClosedRange<Int64>) -> [String] {
    let day = Self.dayLength
    let range = "hour >= \(days.lowerBound * day) AND hour < \((days.upperBound + 1) * day)"
    let session = "if(session_key = '', cityHash64(device), cityHash64(device, cityHash64(session_key)))"
    return [
      """
      INSERT INTO \(local("closed_name_days")) SELECT \(id), app, intDiv(hour, \(day)) AS d, name, sum(events)
      FROM \(local("activity_names")) WHERE \(range) GROUP BY app, d, name
      """,
      """
      INSERT INTO \(local("closed_name_devices")) SELECT \(id), app, name, device,
        groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(intDiv(hour, \(day)) - \(days.lowerBound))))
      FROM \(local("activity_names")) WHERE \(range) GROUP BY app, name, device
      """,
      // A session's rows per day; `alone`: its only day in the build. Events without a session
      // are rows too (`keyed = 0`, per device and day), so every day's events are counted.
      """
      INSERT INTO \(local("closed_sessions")) SELECT \(id), app, tupleElement(x, 1), s, device, keyed,
        toUInt8(length(per) = 1), tupleElement(x, 2), tupleElement(x, 3), tupleElement(x, 4)
      FROM (SELECT app, s, device, keyed, groupArray((d, f, l, n)) AS per FROM (
          SELECT app, intDiv(hour, \(day)) AS d, \(session) AS s, device, toUInt8(session_key != '') AS keyed,
            minMerge(first_ms) AS f, maxMerge(last_ms) AS l, sumMerge(events) AS n
          FROM \(local("activity")) WHERE \(range) GROUP BY app, d, s, device, keyed)
        GROUP BY app, s, device, keyed)
      ARRAY JOIN per AS x
      """,
      // The devices and the days' events from the sessions as built, so all three agree.
      """
      INSERT INTO \(local("closed_devices")) SELECT \(id), app, device,
        groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(day - \(days.lowerBound))))
      FROM \(local("closed_sessions")) WHERE build = \(id) GROUP BY app, device
      """,
      """
      INSERT INTO \(local("closed_day_events")) SELECT \(id), app, day, sum(events)
      FROM \(local("closed_sessions")) WHERE build = \(id) GROUP BY app, day
      """,
    ]
  }

  /// Migration 14: the record of builds with the format of each (``closedFormat``). The builds
  /// recorded before it (in `closed_builds`, dropped) are never read again, and their rows are
  /// dropped as stale by the next build (``ClickHouseEventStore/buildDeviceSets(before:)``).
  var closedRecordsMigration: [String] {
    [
      "CREATE TABLE IF NOT EXISTS \(local("closed_records")) (build Int64, first_day Int64, last_day Int64, "
        + "format Int64) ENGINE = MergeTree ORDER BY build",
      "DROP TABLE IF EXISTS \(local("closed_builds"))",
    ]
  }

  /// What a build holds, as the number of the last migration that changed it (15: the tied
  /// milliseconds of migration 15 beside the step times of 13, recorded with the format since 14).
  /// Reports and the job read only the builds of this format, so a migration that adds or changes a
  /// built table raises it and the job builds again at its next run, while reports read the rollups.
  static let closedFormat: Int64 = 16

  /// The most days one build holds (the bits of its masks).
  static let closedSpan: Int64 = 64
  /// A UTC day in ms.
  static let dayLength: Int64 = 86_400_000
}

/// One recorded build of the closed days.
struct ClosedBuild: Sendable, Hashable {
  /// Its id: the partition of its rows; its start in ms since 1970 times ``perMillisecond``, plus a
  /// random number below that.
  var id: Int64
  /// Ids per millisecond of a build's start.
  static let perMillisecond: Int64 = 1_000_000
  /// Its first and last UTC day (days since 1970), both included.
  var days: ClosedRange<Int64>

  /// Its days wholly inside `filter`'s range (UTC), or `nil` when none.
  func wholeDays(of filter: ReportFilter) -> ClosedRange<Int64>? {
    let day = ClickHouseSchema.dayLength
    let start = max(days.lowerBound, filter.from <= 0 ? 0 : (filter.from + day - 1) / day)
    let end = min(days.upperBound, filter.to / day - 1)
    return start <= end ? start...end : nil
  }

  /// The mask of `days` (of ``days``): bit 0 its first day.
  func mask(_ days: [Int64]) -> UInt64 {
    days.reduce(0) { $0 | (UInt64(1) << UInt64($1 - self.days.lowerBound)) }
  }
}

extension ClickHouseEventStore: DeviceSetKeeping {
  /// Builds the closed days ending the UTC day before `before` (ms; `Int64.max`: up to the newest
  /// event's day) unless the newest build ends there already; returns the days built (0 when none).
  /// The collector's ``DeviceSetKeeping`` job calls it every ten minutes; a build reads the rollups
  /// of 64 days once (at 100M events, 44–56 s on two cores).
  @discardableResult
  public func buildDeviceSets(before: Int64) async throws -> Int {
    let day = ClickHouseSchema.dayLength
    let newest = try await client.rows(
      "SELECT toInt64(count()) AS n, toInt64(max(hour)) AS h FROM \(schema.table("activity"))"
    ).first
    guard (newest?["n"].int ?? 0) > 0, let hour = newest?["h"].int else { return 0 }
    let last = min(before / day - 1, hour / day)
    let first = max(0, last - ClickHouseSchema.closedSpan + 1)
    guard last >= 0 else { return 0 }
    let latest = try await ClickHouseReports.closedBuild(client, schema)
    if let latest, latest.days.upperBound == last { return 0 }
    let drops = try await invalidations()
    // Two collectors building at once never share an id (the random part), and a later build has a
    // larger one.
    let started = Int64(Date().timeIntervalSince1970 * 1000)
    let id = max(
      started * ClosedBuild.perMillisecond + Int64.random(in: 0..<ClosedBuild.perMillisecond), (latest?.id ?? 0) + 1)
    // Each statement on every server before the next: the totals of the days first, so that an
    // event landing during the build is in a later table and not in the totals, and reports read
    // its day from the hours.
    let settings = ["max_bytes_before_external_group_by": "1000000000"]
    for statement in schema.closedBuild(id: id, days: first...last) + [
      schema.closedStepsBuild(id: id, days: first...last), schema.closedTiesBuild(id: id, days: first...last),
    ] {
      for server in servers { try await server.execute(statement, settings: settings) }
    }
    for statement in schema.closedItemsBuild(id: id, days: first...last) {
      try await client.execute(statement, settings: settings)
    }
    try await client.execute(
      "INSERT INTO \(schema.local("closed_records")) (build, first_day, last_day, format) "
        + "VALUES (\(id), \(first), \(last), \(ClickHouseSchema.closedFormat))")
    if try await invalidations() != drops {
      // Rows removed while it read: never read it.
      try await deleteClosedBuilds(where: "build = \(id)")
      try await dropClosedPartitions { $0 == id }
      return 0
    }
    try await dropStaleClosedBuilds(now: started)
    return Int(last - first + 1)
  }

  /// Stops every report reading any build (before and after anything that removes rollup rows) and
  /// drops the rows of every build started before, so nothing erased or pruned stays in them; the
  /// next build makes a new one.
  func invalidateClosedDays() async throws {
    let now = Int64(Date().timeIntervalSince1970 * 1000) * ClosedBuild.perMillisecond
    try await client.execute("INSERT INTO \(schema.local("closed_drops")) (at) VALUES (now())")
    try await deleteClosedBuilds(where: "build >= -9223372036854775807")
    try await dropClosedPartitions { $0 < now }
  }

  private func invalidations() async throws -> Int64 {
    try await client.rows("SELECT toInt64(count()) AS n FROM \(schema.local("closed_drops"))").first?["n"].int ?? 0
  }

  private func deleteClosedBuilds(where condition: String) async throws {
    let table = schema.local("closed_records")
    try await client.execute("ALTER TABLE \(table) DELETE WHERE \(condition)")
    try await waitForMutations(of: table, on: client)
  }

  /// Drops the rows of every build but the newest two recorded ones, on every server: the third
  /// newest at once, one never recorded an hour after it started (it may still be running, on
  /// another collector). Invalidated builds are dropped when invalidated.
  private func dropStaleClosedBuilds(now: Int64) async throws {
    let recorded = try await client.rows(
      "SELECT build FROM \(schema.local("closed_records")) ORDER BY build DESC"
    ).compactMap { $0["build"].int }
    let kept = Set(recorded.prefix(2))
    if let oldest = kept.min(), recorded.count > kept.count {
      try await deleteClosedBuilds(where: "build < \(oldest)")
    }
    let everRecorded = Set(recorded)
    func stale(_ build: Int64) -> Bool {
      !kept.contains(build) && (everRecorded.contains(build) || build / ClosedBuild.perMillisecond < now - 3_600_000)
    }
    try await dropClosedPartitions(stale)
  }

  /// Drops, on every server, the rows of the builds `dropped` picks from every built table.
  private func dropClosedPartitions(_ dropped: (Int64) -> Bool) async throws {
    let built = ClickHouseSchema.closedDays + ClickHouseSchema.closedSteps + ClickHouseSchema.closedTies
    let tables = (built + ClickHouseSchema.closedItems).map {
      schema.local($0.name).split(separator: ".").last.map(String.init) ?? $0.name
    }
    for server in servers {
      let parts = try await server.rows(
        "SELECT DISTINCT table, partition FROM system.parts WHERE database = \(ClickHouseSQL.literal(schema.database)) "
          + "AND table IN \(ClickHouseSQL.list(tables)) AND active")
      for part in parts {
        guard let table = part["table"].text, let build = part["partition"].text.flatMap({ Int64($0) }), dropped(build)
        else { continue }
        try await server.execute("ALTER TABLE \(schema.database).\(table) DROP PARTITION \(build)")
      }
    }
  }
}
