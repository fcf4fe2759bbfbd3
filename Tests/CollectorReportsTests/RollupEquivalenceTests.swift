import CollectorClickHouse
import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import Testing

/// A generated data set with everything that could make rollups disagree with the events: several
/// apps, devices changing platform and version, events without a session, events in one
/// millisecond, resent batches, ranges on whole hours and not.
enum Generated {
  static let start = ReportTime.parse("2026-10-05")!
  static let hour: Int64 = 3_600_000

  /// A deterministic generator (SplitMix64), so a failure repeats.
  struct Numbers {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return Int((z ^ (z >> 31)) % UInt64(bound))
    }
  }

  static let names = ["app_open", "screen_view", "product_viewed", "add_to_cart", "checkout", "purchase", "refund"]
  static let platforms = [("iOS", ["17.4", "18.1"]), ("Android", ["14", "15"])]
  static let versions = ["9.0", "10.0", "10.0.1-beta", "10.0.1"]

  /// Batches of about 2,500 events of 60 devices over three weeks, in apps `shop` and `other`; every
  /// fourth batch is sent twice. Every third device signs in, most sessions (not all: anonymous
  /// events before and between), as one of 10 users with two devices each.
  static var batches: [StoreBatch] {
    var numbers = Numbers(state: 2026)
    var batches: [StoreBatch] = []
    for device in 0..<60 {
      var events: [StoredEvent] = []
      let app = device % 5 == 4 ? "other" : "shop"
      var (platform, osVersions) = platforms[device % 2]
      var session: Int64 = Int64(device) * 1_000
      for _ in 0..<(2 + numbers.next(8)) {
        session += 1
        var time = start + Int64(numbers.next(21 * 24)) * hour + Int64(numbers.next(3_600_000))
        // An upgrade, and now and then another phone of the same user.
        let version = versions[
          min(versions.count - 1, numbers.next(versions.count) + (time > start + 14 * 86_400_000 ? 1 : 0))]
        if numbers.next(10) == 0 { (platform, osVersions) = platforms[numbers.next(2)] }
        let osVersion = osVersions[numbers.next(osVersions.count)]
        let sessionID: Int64? = numbers.next(6) == 0 ? nil : session
        for index in 0..<(1 + numbers.next(12)) {
          // Events in one millisecond, and sessions across the top of an hour.
          time += numbers.next(4) == 0 ? 0 : Int64(numbers.next(600_000))
          let name = index == 0 ? "app_open" : names[1 + numbers.next(names.count - 1)]
          events.append(
            StoredEvent(
              app: app, eventID: "\(device)-\(session)-\(index)", name: name, kind: "action", occurredAt: time,
              utcOffsetMinutes: 0, receivedAt: time, deviceID: "device-\(device)",
              userID: device % 3 == 0 && session % 3 != 1 ? "user-\(device / 6)" : nil, sessionID: sessionID,
              context: EventContext([
                .appName: "Shop", .appVersion: version, .osName: platform, .osVersion: osVersion, .platform: platform,
                .libraryName: "CoreTracker/1.0.0",
              ]),
              parametersJSON: parameters(name, "\(device)-\(session)", &numbers)))
        }
      }
      batches.append(StoreBatch(events: events))
      if device % 4 == 0 { batches.append(StoreBatch(events: Array(events.prefix(events.count / 2)))) }
    }
    return batches
  }

  /// A purchase's or refund's order (now and then a transaction sent twice, an item without an id, a
  /// quantity of 0, an item that is not an object; prices in quarters, so every sum is exact in any
  /// order), else a product id.
  static func parameters(_ name: String, _ session: String, _ numbers: inout Numbers) -> String {
    guard name == "purchase" || name == "refund" else { return #"{"product_id":"p\#(numbers.next(20))"}"# }
    let currency = ["TRY", "EUR"][numbers.next(2)]
    let transaction = numbers.next(5) == 0 ? "T-\(numbers.next(3))" : "T-\(session)-\(numbers.next(1_000))"
    var items: [String] = []
    for _ in 0..<numbers.next(4) {
      let product = numbers.next(10)
      let id = numbers.next(12) == 0 ? "" : #""item_id":"p\#(product)","#
      items.append(
        "{\(id)\"item_name\":\"Product \(product) v\(numbers.next(2))\",\"item_category\":\"\(["shoes", "bags"][product % 2])\","
          + "\"item_brand\":\"\(["A", "B", "C"][product % 3])\",\"price\":\(Double(1 + numbers.next(400)) / 4),"
          + "\"quantity\":\(numbers.next(8) == 0 ? 0 : 1 + numbers.next(3))}")
    }
    if numbers.next(10) == 0 { items.append(#""loose""#) }
    let value = Double(numbers.next(4_000)) / 4
    return
      #"{"transaction_id":"\#(transaction)","currency":"\#(currency)","value":\#(value),"items":[\#(items.joined(separator: ","))]}"#
  }

  /// Filters on whole hours (rollups answer them) over all three weeks and parts of them.
  static var filters: [ReportFilter] {
    let day: Int64 = 86_400_000
    return [
      try! ReportFilter(app: "shop", from: start, to: start + 21 * day),
      try! ReportFilter(app: "shop", from: start + 3 * day + 5 * hour, to: start + 12 * day + 17 * hour),
      try! ReportFilter(app: "shop", from: start, to: start + 21 * day, platform: "Android"),
      try! ReportFilter(app: "shop", from: start + 7 * day, to: start + 21 * day, appVersion: "10.0"),
      try! ReportFilter(app: "shop", from: start, to: start + 14 * day, platform: "iOS", osVersion: "18.1"),
      try! ReportFilter(app: "other", from: start, to: start + 21 * day),
      // Days in a zone: Berlin (DST ends on 2026-10-25) keeps whole hours, so the rollups answer;
      // Kolkata (+05:30) does not.
      try! ReportFilter(
        app: "shop", from: start, to: start + 21 * day, zone: try! ReportZone(identifier: "Europe/Berlin")),
      try! ReportFilter(
        app: "shop", from: start + 5 * hour, to: start + 14 * day, zone: try! ReportZone(identifier: "Asia/Kolkata")),
    ]
  }
}

/// Every report that rollups answer gives the same result read from the rollups as read from the
/// events, on both stores, after ingest, erasure, pruning and a rebuild.
@Suite("Rollups answer exactly as the events do")
struct RollupEquivalenceTests {
  /// Every rollup-backed report for `filter`, as JSON (so any difference in any field shows).
  static func results(_ reports: any ReportEngine, _ filter: ReportFilter) async throws -> [String: String] {
    var results: [String: any ReportResult] = [:]
    results["overview"] = try await reports.overview(filter)
    results["top-events"] = try await reports.topEvents(filter, limit: 100)
    for dimension in ReportDimension.allCases {
      results["breakdown-\(dimension.rawValue)"] = try await reports.breakdown(filter, by: dimension)
    }
    for bucket in [ReportBucket.hour, .day] {
      results["timeseries-\(bucket)"] = try await reports.timeSeries(filter, bucket: bucket)
      results["timeseries-\(bucket)-purchase"] = try await reports.timeSeries(filter, bucket: bucket, event: "purchase")
    }
    for unit in ReportUnit.allCases {
      var filter = filter
      filter.unit = unit
      results["active-\(unit)"] = try await reports.activeDevices(filter)
      for period in [ReportBucket.day, .week] {
        results["retention-\(period)-\(unit)"] = try await reports.retention(filter, period: period)
        results["retention-\(period)-versions-\(unit)"] = try await reports.retention(
          filter, period: period, byAppVersion: true)
      }
      results["funnel-\(unit)"] = try await reports.funnel(
        filter, steps: ["app_open", "product_viewed", "purchase"], window: 86_400_000)
    }
    results["sessions"] = try await reports.sessions(filter)
    // Text values: engines write a whole number sent as `801.0` differently (SQLite `801.0`,
    // ClickHouse `801`); ParameterCacheTests checks numbers on each SQL engine.
    for (event, key) in [("purchase", "currency"), ("purchase", "transaction_id"), ("product_viewed", "product_id")] {
      results["parameter-\(event)-\(key)"] = try await reports.parameterValues(filter, event: event, parameter: key)
    }
    results["revenue"] = try await reports.revenue(filter)
    results["top-items"] = try await reports.topItems(filter, category: nil, brand: nil, limit: 100)
    results["top-items-shoes"] = try await reports.topItems(filter, category: "shoes", brand: nil, limit: 100)
    results["top-items-b"] = try await reports.topItems(filter, category: nil, brand: "B", limit: 100)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return try results.mapValues { String(decoding: try encoder.encode($0), as: UTF8.self) }
  }

  static func expectSame(_ store: any BulkLoading, _ stage: String) async throws {
    for filter in Generated.filters {
      let fromRollups = try await results(SQLReports(store: store), filter)
      let fromEvents = try await results(SQLReports(store: store, rollups: false), filter)
      // People and devices differ in the shop (two devices per user), so both units are compared.
      if filter.app == "shop" && filter.platform == nil {
        #expect(fromEvents["active-person"] != fromEvents["active-device"], "\(stage), \(filter)")
      }
      for (name, expected) in fromEvents.sorted(by: { $0.key < $1.key }) {
        #expect(fromRollups[name] == expected, "\(stage), \(name), \(filter)")
      }
    }
  }

  @Test(arguments: Engine.sql)
  func rollupsMatchTheEventsThroughIngestErasurePruningAndRebuild(engine: Engine) async throws {
    let store = try await engine.open(Generated.batches)
    let rollups = try #require(store.rollups)
    // The rollups hold every stored event once (resent batches added nothing).
    let events = try await store.read("SELECT count(*) FROM \(store.eventsTable)", []).first?.values.first?.int
    let rolled = try await store.read("SELECT CAST(sum(events) AS BIGINT) FROM \(rollups.sessions)", []).first?.values
      .first?
      .int
    #expect(events == rolled)
    #expect((events ?? 0) > 1_000)
    try await Self.expectSame(store, "after ingest")

    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: "device-7", userID: nil)!).rows > 0)
    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: nil, userID: "user-2")!).rows > 0)
    try await Self.expectSame(store, "after erasure")

    // Cut-offs inside an hour: that hour's rollup rows are rebuilt from what is left.
    let day: Int64 = 86_400_000
    let pruned = try await store.prune(
      PruneCutoffs(
        defaultCutoff: Generated.start + 2 * day + 90 * 60_000, perApp: ["other": Generated.start + 4 * day + 1_234]))
    #expect(pruned > 0)
    try await Self.expectSame(store, "after pruning")

    let before = try await Self.results(SQLReports(store: store), Generated.filters[0])
    #expect(try await store.rebuildRollups() > 0)
    #expect(try await Self.results(SQLReports(store: store), Generated.filters[0]) == before)
    try await store.close()
  }

  @Test(arguments: Engine.sql)
  func reportsReallyReadTheRollups(engine: Engine) async throws {
    let store = try await engine.open(Generated.batches)
    let rollups = try #require(store.rollups)
    let filter = Generated.filters[0]
    let honest = try await SQLReports(store: store).overview(filter)
    // Damage the rollups on purpose: reports on whole hours must show it, others must not.
    try await store.execute("UPDATE \(rollups.sessions) SET events = events + 1")
    let damaged = try await SQLReports(store: store).overview(filter)
    #expect(damaged.current.events > honest.current.events)
    #expect(try await SQLReports(store: store, rollups: false).overview(filter) == honest)
    var ragged = filter
    ragged.to -= 1
    #expect(
      try await SQLReports(store: store).overview(ragged) == SQLReports(store: store, rollups: false).overview(ragged))
    // The commerce facts answer every range, whole hours or not.
    for range in [filter, ragged] {
      let revenue = try await SQLReports(store: store).revenue(range)
      let items = try await SQLReports(store: store).topItems(range)
      #expect(revenue.current.count == 2 && items.rows.count > 5)
      try await store.execute("UPDATE \(rollups.orders) SET value = value + 1")
      try await store.execute("UPDATE \(rollups.items) SET quantity = quantity + 1")
      #expect(try await SQLReports(store: store).revenue(range).current.map(\.gross) != revenue.current.map(\.gross))
      #expect(try await SQLReports(store: store).topItems(range).rows.map(\.units) != items.rows.map(\.units))
      #expect(try await SQLReports(store: store, rollups: false).revenue(range) == revenue)
      try await store.execute("UPDATE \(rollups.orders) SET value = value - 1")
      try await store.execute("UPDATE \(rollups.items) SET quantity = quantity - 1")
    }
    try await store.close()
  }

  /// ClickHouse's rollups (fed at insert by views) answer as its events do after ingest (resent
  /// batches, events out of order), erasure and pruning; reports on whole hours read them.
  @Test(arguments: Engine.available.filter { $0 == .clickhouse || $0 == .clickhouseCluster })
  func clickHouseRollupsMatchItsEventsThroughErasureAndPruning(engine: Engine) async throws {
    let (written, _) = try await engine.openReports(Generated.batches)
    let store = try #require(written as? ClickHouseEventStore)
    func expectSame(_ stage: String) async throws {
      // Part of the range, and the whole range in Berlin: on whole hours, so the rollups answer.
      for filter in [Generated.filters[1], Generated.filters[6]] {
        let fromRollups = try await Self.results(ClickHouseReports(store: store), filter)
        let fromEvents = try await Self.results(ClickHouseReports(store: store, rollups: false), filter)
        for (name, expected) in fromEvents.sorted(by: { $0.key < $1.key }) {
          #expect(fromRollups[name] == expected, "\(stage), \(name), \(filter)")
        }
      }
    }
    try await expectSame("after ingest")
    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: "device-7", userID: nil)!).rows > 0)
    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: nil, userID: "user-2")!).rows > 0)
    try await expectSame("after erasure")
    let day: Int64 = 86_400_000
    let cutoffs = PruneCutoffs(
      defaultCutoff: Generated.start + 2 * day + 90 * 60_000, perApp: ["other": Generated.start + 4 * day + 1_234])
    #expect(try await store.prune(cutoffs) > 0)
    try await expectSame("after pruning")
    #expect(try await store.reconcile() == 0)

    // A rollup row no event backs: reports on whole hours show it, the events do not; the
    // reconciliation removes it.
    let client = try ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
    try await client.execute(
      "INSERT INTO \(store.database).activity_names (app, hour, name, device, device_id, platform, app_version, "
        + "os_version, events) VALUES ('shop', \(Generated.start + 10 * day), 'app_open', 1, 'device-0', 'iOS', "
        + "'9.0', '17.4', 5)", settings: ["insert_distributed_sync": "1"])
    let filter = Generated.filters[0]
    let honest = try await ClickHouseReports(store: store, rollups: false).topEvents(filter, limit: 100)
    #expect(try await ClickHouseReports(store: store).topEvents(filter, limit: 100) != honest)
    // One event's reports read the events (sorted by day and name), not the rollup by hour.
    let oneEvent = try await ClickHouseReports(store: store, rollups: false).timeSeries(
      filter, bucket: .hour, event: "app_open")
    #expect(try await ClickHouseReports(store: store).timeSeries(filter, bucket: .hour, event: "app_open") == oneEvent)
    #expect(try await store.reconcile() == 1)
    #expect(try await ClickHouseReports(store: store).topEvents(filter, limit: 100) == honest)
    try await store.close()
  }
}
