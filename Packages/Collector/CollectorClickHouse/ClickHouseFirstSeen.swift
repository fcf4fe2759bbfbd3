import CollectorStore

/// When each device was first seen (migration 12): one row per (app, device) with the time of its
/// first stored event, so that "was this unit seen before the range?" (active users' new against
/// returning) reads one row per device instead of every rollup row of the app's history. Before
/// it, active users read every `activity` row before the range's end: its cost grew with the age of
/// the store, not with the range (a year of data, 13 times the 28 days the benchmark holds).
///
/// - Fed at insert by a materialised view on each server's events (`device_first_feed`): each
///   inserted block adds its devices' earliest times (`seen_ms`). A `ReplacingMergeTree` whose
///   version is the time reversed keeps, per (app, device, generation), the earliest row when parts
///   merge. Every row's time is one of the device's events', so a device was seen before a time
///   when any of its rows is: rows not merged yet answer the same.
/// - Exact under duplicates and any insert order: a copy or a late event can only repeat or lower
///   a minimum, which is what the rows keep.
/// - Erasure and retention (``ClickHouseEventStore/repairFirstSeen(where:recheck:)``) replace the rows of
///   the devices they touch with their earliest time in the rebuilt `activity` rollup, written
///   under a generation of their own before the old rows are deleted, then the rollup's rows of
///   those devices written again (a write meanwhile keeps its row), so a device is never without a
///   row while it has events.
///
/// Sharded by device, as the events: a device's rows are on its events' shard.
extension ClickHouseSchema {
  /// The table of migration 12.
  static let firstSeen = Table(
    name: "device_first",
    columns: """
      app String, device UInt64, device_id String, seen_ms Int64, generation UInt64, version UInt64
      """,
    engine: "ReplacingMergeTree(version) ORDER BY (app, device, device_id, generation)",
    shardBy: "cityHash64(device_id)")

  /// A `device_first` row's columns from the device's hash and id, its earliest time `first` (an
  /// expression) and `generation`: the version is the time reversed, so a merge keeps the earliest.
  static func firstSeenRow(first: String, generation: UInt64) -> String {
    "app, cityHash64(device_id) AS device, device_id, \(first) AS seen_ms, toUInt64(\(generation)) AS generation, "
      + "toUInt64(9223372036854775807 - \(first)) AS version"
  }

  /// Migration 12: the table, the view feeding it from each server's events, and the rows of the
  /// devices stored before, from each server's `activity` rollup (which keeps every device's
  /// earliest event time). An event inserted between the view's creation and the backfill is seen
  /// twice: a minimum does not change.
  var firstSeenMigration: [String] {
    create(Self.firstSeen) + [
      """
      CREATE MATERIALIZED VIEW IF NOT EXISTS \(database).device_first_feed TO \(local("device_first")) AS
      SELECT \(Self.firstSeenRow(first: "min(occurred_at)", generation: 0)) FROM \(local("events")) GROUP BY app, device_id
      """,
      "INSERT INTO \(local("device_first")) " + firstSeenRows(of: "1", generation: 0),
    ]
  }

  /// The `SELECT` giving, from this server's `activity`, the earliest event time of each device
  /// matching `devices` (a condition over `app` and `device_id`), as `device_first` rows of
  /// `generation`.
  func firstSeenRows(of devices: String, generation: UInt64) -> String {
    """
    SELECT \(Self.firstSeenRow(first: "earliest", generation: generation)) FROM (
      SELECT app, device_id, minMerge(first_ms) AS earliest FROM \(local("activity")) WHERE \(devices)
      GROUP BY app, device_id)
    """
  }

  /// The hashes of `app`'s devices (a literal) first seen before `time` (ms, a literal).
  func devicesSeen(app: String, before time: String) -> String {
    "SELECT device FROM \(table("device_first")) WHERE app = \(app) AND seen_ms < \(time)"
  }
}

extension ClickHouseEventStore {
  /// Replaces the `device_first` rows matching `stale` (a condition over `app`, `device_id` and
  /// `seen_ms`: the devices an erasure or a retention cut touched) with each of those devices'
  /// earliest time in `activity`, rebuilt before this is called. On each server, from its own
  /// shard: the new rows are written first, under a generation of their own, then the old ones
  /// deleted; a device left without events keeps no row. A write storing one of those devices'
  /// events meanwhile may have its view's row deleted with the old ones: the rollup's rows matching
  /// `recheck` (over `app`, `device_id` and `hour`: where such an event's rows are) are written
  /// again after the deletion.
  func repairFirstSeen(where stale: String, recheck: String) async throws {
    let generation = UInt64.random(in: 1...UInt64.max)
    let table = schema.local("device_first")
    for server in servers {
      try await server.execute(
        "INSERT INTO \(table) "
          + schema.firstSeenRows(
            of: "(app, device_id) IN (SELECT app, device_id FROM \(table) WHERE \(stale))", generation: generation))
      try await server.execute("ALTER TABLE \(table) DELETE WHERE (\(stale)) AND generation != \(generation)")
      try await waitForMutations(of: table, on: server)
      try await server.execute("INSERT INTO \(table) " + schema.firstSeenRows(of: recheck, generation: generation))
    }
  }
}
