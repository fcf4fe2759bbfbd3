import AsyncHTTPClient
import CollectorClickHouse
import CollectorReports
import CollectorStore
import Foundation
import TestSupport
import Testing

/// ClickHouse answers every report exactly as SQLite does on the generated data set (several apps,
/// devices changing platform and version, resent batches, orders sent twice, odd items), over every
/// generated filter, also when two collectors store the same batches at the same time, reading its
/// rollups (and the events where they do not answer).
@Suite("ClickHouse answers as SQLite does")
struct EngineEquivalenceTests {
  @Test(arguments: Engine.available.filter { $0 == .clickhouse || $0 == .clickhouseCluster })
  func everyReportOnTheGeneratedData(engine: Engine) async throws {
    let sqlite = try await Engine.sqlite.open(Generated.batches)
    let clickhouse = try #require(try engine.clickHouse())
    try await clickhouse.migrate()
    // Two collectors on one database, storing the same batches at once: some events can be stored
    // by both (each checked before the other inserted).
    let other = try #require(try engine.clickHouse(database: clickhouse.database))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for store in [clickhouse, other] {
        group.addTask { for batch in Generated.batches { _ = try await store.write(batch) } }
      }
      try await group.waitForAll()
    }
    // Once every write answered, each event is stored once, whatever the race did.
    let client = try ClickHouseClient(url: clickhouse.url, database: clickhouse.database, http: ClickHouseClient.http)
    let tables = ["events", "orders", "items"].map { "\(clickhouse.database).\($0)" }
    let distinct = try await sqlite.eventCount(app: nil)
    #expect(try await Self.rows(client, tables[0]) == distinct)
    // And a third of the events and their facts stored twice for certain (what a lost race leaves
    // before its write repairs it): the repair leaves each stored once.
    let copied = "cityHash64(event_id) % 3 = 0"
    let copies = Int(
      try await client.rows("SELECT toInt64(count()) AS n FROM \(tables[0]) WHERE \(copied)").first?["n"].int ?? -1)
    let before = try await Self.rollupCounts(client, clickhouse.database)
    for table in tables {
      try await client.execute(
        "INSERT INTO \(table) SELECT * FROM \(table) WHERE \(copied)", settings: ["insert_distributed_sync": "1"])
    }
    // Both rollups' views counted every copy. (What the race left in them before is theirs: two
    // writes repairing the same hours at once can leave the rollups off until a reconciliation.)
    let after = try await Self.rollupCounts(client, clickhouse.database)
    #expect(copies > 0)
    #expect(after.sessions - before.sessions == copies && after.names - before.names == copies, "\(before) → \(after)")
    try await clickhouse.removeDuplicates(of: Generated.batches.flatMap(\.events))
    _ = try await clickhouse.reconcile()
    #expect(try await Self.rows(client, tables[0]) == distinct)
    #expect(try await Self.rolledUp(client, clickhouse.database) == distinct)
    for table in tables.dropFirst() {
      let final = try await client.rows("SELECT toInt64(count()) AS n FROM \(table) FINAL").first?["n"].int
      #expect(try await Self.rows(client, table) == Int(final ?? -1), "\(table)")
    }
    for filter in Generated.filters {
      let expected = try await RollupEquivalenceTests.results(SQLReports(store: sqlite, rollups: false), filter)
      let got = try await RollupEquivalenceTests.results(ClickHouseReports(store: clickhouse), filter)
      for (name, answer) in expected.sorted(by: { $0.key < $1.key }) {
        #expect(got[name] == answer, "\(name), \(filter)")
      }
    }
    // Orders sent twice (the generated `T-0` … `T-2`) are named in the query by their keys' hashes,
    // and sessions across the top of an hour by theirs; past `repeatedKeysListed` of them, every
    // order is grouped by key and every session's rows by session: the same answers.
    let listed = ClickHouseReports(store: clickhouse)
    var grouped = listed
    grouped.repeatedKeysListed = 0
    for filter in Generated.filters {
      #expect(try await grouped.revenue(filter) == listed.revenue(filter), "\(filter)")
      #expect(try await grouped.sessions(filter) == listed.sessions(filter), "\(filter)")
      for (category, brand) in [(nil, nil), ("shoes", nil), (nil, "B")] as [(String?, String?)] {
        #expect(
          try await grouped.topItems(filter, category: category, brand: brand, limit: 100)
            == listed.topItems(filter, category: category, brand: brand, limit: 100), "\(filter)")
      }
    }
    // Retention by 64-bit masks of each unit's periods, and by arrays (`maskedPeriods = 0`): the
    // same cells, for any event and named ones, by person and by device, split by version or not.
    var arrays = listed
    arrays.maskedPeriods = 0
    // A cohort's first period counts without a return in it; returns before it (an app open before
    // the first purchase) do not.
    let named = RetentionEvents(start: "app_open", back: "purchase")
    let reversed = RetentionEvents(start: "purchase", back: "app_open")
    for filter in Generated.filters {
      for unit in [ReportUnit.person, .device] {
        var filter = filter
        filter.unit = unit
        let cases: [(ReportBucket, Bool, RetentionEvents)] = [
          (.day, false, .any), (.week, true, .any), (.day, true, named), (.week, false, reversed),
        ]
        for (period, byAppVersion, events) in cases {
          #expect(
            try await arrays.retention(filter, period: period, byAppVersion: byAppVersion, events: events)
              == listed.retention(filter, period: period, byAppVersion: byAppVersion, events: events),
            "\(filter), \(period), \(byAppVersion), \(events)")
        }
      }
    }
    if engine == .clickhouseCluster { try await Self.expectShardedByDevice(clickhouse.database) }
    try await sqlite.close()
  }

  /// The rows of `table` as stored, duplicates included.
  static func rows(_ client: ClickHouseClient, _ table: String) async throws -> Int {
    Int(try await client.rows("SELECT toInt64(count()) AS n FROM \(table)").first?["n"].int ?? -1)
  }

  /// The events each rollup counts: `activity` (by session) and `activity_names` (by name).
  static func rollupCounts(_ client: ClickHouseClient, _ database: String) async throws -> (sessions: Int, names: Int) {
    let row = try await client.rows(
      "SELECT (SELECT toInt64(sumMerge(events)) FROM \(database).activity) AS s, "
        + "(SELECT toInt64(sum(events)) FROM \(database).activity_names) AS n"
    ).first
    return (Int(row?["s"].int ?? -1), Int(row?["n"].int ?? -1))
  }

  /// The events both rollups count, or -1 when they disagree.
  static func rolledUp(_ client: ClickHouseClient, _ database: String) async throws -> Int {
    let counts = try await rollupCounts(client, database)
    return counts.sessions == counts.names ? counts.sessions : -1
  }

  /// Both shards hold events, and every device's events are on one shard.
  static func expectShardedByDevice(_ database: String) async throws {
    var devices: [Set<String>] = []
    for shard in ClickHouseTestServer.shardURLs ?? [] {
      let client = try ClickHouseClient(url: URL(string: shard)!, database: database, http: ClickHouseClient.http)
      let rows = try await client.rows("SELECT DISTINCT device_id FROM \(database).events_local")
      devices.append(Set(rows.compactMap { $0["device_id"].text }))
    }
    #expect(devices.count == 2 && devices.allSatisfy { !$0.isEmpty })
    #expect(devices.count == 2 && devices[0].isDisjoint(with: devices[1]))
  }
}
