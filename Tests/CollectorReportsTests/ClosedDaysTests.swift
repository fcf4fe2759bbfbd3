import CollectorReports
import CollectorStore
import Foundation
import TestSupport
import Testing

@testable import CollectorClickHouse

/// ClickHouse's closed days (top events' devices from a build of whole UTC days) answer as the
/// events do, whatever is built, through late and resent events, builds beside writes, erasure and
/// pruning; and reports read them.
@Suite("ClickHouse's closed days answer exactly as the events do")
struct ClosedDaysTests {
  static let day: Int64 = 86_400_000

  static var engines: [Engine] { Engine.available.filter { $0 == .clickhouse || $0 == .clickhouseCluster } }

  /// Top events, sessions, top items, the overview, active users, funnels (by person and by
  /// device; gathered and sorted) and retention (weekly by person, daily by device) of every generated filter (by platform and in Kolkata they read the rollup; the rest
  /// take whole UTC days from the build, Berlin's edges and DST day from the hours; Berlin's weeks
  /// start at 23:00 or 22:00 UTC, so the UTC day each week starts in is read from the hours too),
  /// from the closed days and from the events.
  static func expectSame(_ store: ClickHouseEventStore, _ stage: String) async throws {
    for filter in Generated.filters {
      for limit in [100, 3] {
        let served = try await ClickHouseReports(store: store).topEvents(filter, limit: limit)
        let honest = try await ClickHouseReports(store: store, rollups: false).topEvents(filter, limit: limit)
        #expect(served == honest, "\(stage), limit \(limit), \(filter)")
      }
      let sessions = try await ClickHouseReports(store: store).sessions(filter)
      #expect(
        sessions == (try await ClickHouseReports(store: store, rollups: false).sessions(filter)), "\(stage), \(filter)")
      #expect(
        try await ClosedItemsTests.items(store, filter, rollups: true)
          == ClosedItemsTests.items(store, filter, rollups: false), "\(stage), \(filter)")
      let overview = try await ClickHouseReports(store: store).overview(filter)
      #expect(
        overview == (try await ClickHouseReports(store: store, rollups: false).overview(filter)), "\(stage), \(filter)")
      for (unit, period) in [(ReportUnit.person, ReportBucket.week), (.device, .day)] {
        var filter = filter
        filter.unit = unit
        #expect(
          try await retention(store, filter, period, rollups: true)
            == retention(store, filter, period, rollups: false), "\(stage), \(period), \(filter)")
        #expect(
          try await ClickHouseReports(store: store).activeDevices(filter)
            == ClickHouseReports(store: store, rollups: false).activeDevices(filter), "\(stage), \(filter)")
        // Funnels gathered as read, and read sorted (gathering nothing: the rows sorted instead).
        var sorted = ClickHouseReports(store: store)
        sorted.funnelLimits.gatheredEvents = 0
        for (steps, window) in Self.funnels {
          let honest = try await ClickHouseReports(store: store, rollups: false).funnel(
            filter, steps: steps, window: window, appVersion: nil)
          for reports in [ClickHouseReports(store: store), sorted] {
            #expect(
              try await reports.funnel(filter, steps: steps, window: window, appVersion: nil) == honest,
              "\(stage), \(steps), \(filter), at most \(reports.funnelLimits.gatheredEvents)")
          }
        }
      }
    }
  }

  /// Funnels read from the build's step times where it answers: three steps in an hour, and four in
  /// a day with a step named twice.
  static let funnels: [([String], Int64)] = [
    (["app_open", "product_viewed", "purchase"], hour),
    (["screen_view", "add_to_cart", "screen_view", "purchase"], day),
  ]

  /// Retention of any event, not by version, read as served or from the events.
  static func retention(
    _ store: ClickHouseEventStore, _ filter: ReportFilter, _ period: ReportBucket, rollups: Bool
  ) async throws -> Retention {
    try await ClickHouseReports(store: store, rollups: rollups).retention(
      filter, period: period, byAppVersion: false, events: .any)
  }

  /// A build is read only for ranges it covers at least half of: a device added to it on purpose
  /// shows in a 6-day range holding its 4 days, not in the 21-day one.
  @Test(arguments: engines)
  func aBuildIsReadForRangesItMostlyCovers(engine: Engine) async throws {
    let store = try await Self.open(engine)
    #expect(try await store.buildDeviceSets(before: Generated.start + 4 * Self.day) == 64)
    let long = Generated.filters[0]
    let short = try ReportFilter(app: "shop", from: Generated.start, to: Generated.start + 6 * Self.day)
    let honest = (
      long: try await ClickHouseReports(store: store, rollups: false).topEvents(long, limit: 100),
      short: try await ClickHouseReports(store: store, rollups: false).topEvents(short, limit: 100)
    )
    let client = try ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
    let table = "\(store.database).closed_name_devices"
    let build = try #require(try await client.rows("SELECT max(build) AS b FROM \(table)").first?["b"].int)
    try await client.execute(
      "INSERT INTO \(table) (build, app, name, device, days) VALUES (\(build), 'shop', 'app_open', 12345, \(UInt64.max))",
      settings: ["insert_distributed_sync": "1"])
    #expect(try await ClickHouseReports(store: store).topEvents(long, limit: 100) == honest.long)
    #expect(try await ClickHouseReports(store: store).topEvents(short, limit: 100) != honest.short)
    try await store.close()
  }

  /// Funnels read the build's step times: a device added to them on purpose is counted. A build
  /// recorded with another format (one made before migration 14, emulated by recording it again as
  /// 13) is not read by any report, and the next job run builds again at once.
  @Test(arguments: engines)
  func funnelsReadTheBuildsStepTimesOfItsFormatAlone(engine: Engine) async throws {
    let store = try await Self.open(engine)
    #expect(try await store.buildDeviceSets(before: .max) == 64)
    let filter = Generated.filters[0]
    let (steps, window) = Self.funnels[0]
    let honest = try await ClickHouseReports(store: store, rollups: false).funnel(
      filter, steps: steps, window: window, appVersion: nil)
    let served = {
      try await ClickHouseReports(store: store).funnel(filter, steps: steps, window: window, appVersion: nil)
    }
    #expect(try await served() == honest)
    let client = try ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
    let table = "\(store.database).closed_name_times"
    let build = try #require(try await client.rows("SELECT max(build) AS b FROM \(table)").first?["b"].int)
    let time = Generated.start + 2 * Self.day
    let records = "\(store.database).closed_records\(engine == .clickhouseCluster ? "_local" : "")"
    let record = try #require(
      try await client.rows("SELECT first_day AS f, last_day AS l FROM \(records) WHERE build = \(build)").first)
    let (origin, length) = (
      ClickHouseSchema.stepTimesOrigin(last: record["l"].int ?? 0), ClickHouseSchema.stepTimesPeriod
    )
    let period = (time - origin) / length
    try await client.execute(
      "INSERT INTO \(table) (build, app, name, device, period, times) VALUES "
        + "(\(build), 'shop', 'app_open', 12345, \(period), [\(time - origin - period * length)])",
      settings: ["insert_distributed_sync": "1"])
    #expect(try await served().steps.first?.devices == (honest.steps.first?.devices ?? 0) + 1)
    try await client.execute("TRUNCATE TABLE \(records)")
    try await client.execute(
      "INSERT INTO \(records) (build, first_day, last_day, format) VALUES "
        + "(\(build), \(record["f"].int ?? 0), \(record["l"].int ?? 0), 13)")
    #expect(try await served() == honest)
    #expect(try await store.buildDeviceSets(before: .max) == 64)
    #expect(try await served() == honest)
    try await store.close()
  }

  /// The hours a report reads from the rollup beside the clean days: edges, gaps, nothing.
  @Test(
    arguments: [
      (from: 0, to: 3 * day, days: [0, 1, 2], rest: []),
      (from: 5 * hour, to: 3 * day, days: [1, 2], rest: [5 * hour..<day]),
      (from: 5 * hour, to: 3 * day + 7 * hour, days: [1, 2], rest: [5 * hour..<day, 3 * day..<3 * day + 7 * hour]),
      (from: 0, to: 5 * day, days: [3, 1], rest: [0..<day, 2 * day..<3 * day, 4 * day..<5 * day]),
      (from: 0, to: 2 * day, days: [], rest: [0..<2 * day]),
    ] as [(from: Int64, to: Int64, days: [Int64], rest: [Range<Int64>])])
  func theRestOfARangeIsItsHoursOutsideTheCleanDays(
    range: (from: Int64, to: Int64, days: [Int64], rest: [Range<Int64>])
  ) {
    #expect(ClickHouseReports.restRanges(from: range.from, to: range.to, outside: range.days) == range.rest)
  }

  /// The clean days as runs of consecutive days (the funnel's step times cut to them).
  @Test(
    arguments: [
      (days: [], runs: []), (days: [4], runs: [4..<5]), (days: [3, 1, 2], runs: [1..<4]),
      (days: [7, 1, 2, 5], runs: [1..<3, 5..<6, 7..<8]),
    ] as [(days: [Int64], runs: [Range<Int64>])])
  func cleanDaysAreReadAsRunsOfDays(case: (days: [Int64], runs: [Range<Int64>])) {
    #expect(ClickHouseReports.runs(of: `case`.days) == `case`.runs)
  }

  /// The clean days' step-time periods (32 days each, from a build's origin: here day 10): each the
  /// days' times in ms from its start.
  @Test(
    arguments: [
      (days: [], periods: []),
      (days: [43], periods: [(1, "(t >= \(day) AND t < \(2 * day))")]),
      (
        days: [40, 41, 42, 50],
        periods: [
          (0, "(t >= \(30 * day) AND t < \(32 * day))"),
          (1, "(t >= 0 AND t < \(day)) OR (t >= \(8 * day) AND t < \(9 * day))"),
        ]
      ),
      (days: [10, 73], periods: [(0, "(t >= 0 AND t < \(day))"), (1, "(t >= \(31 * day) AND t < \(32 * day))")]),
    ] as [(days: [Int64], periods: [(Int64, String)])])
  func cleanDaysAreReadInTheirStepTimePeriods(case: (days: [Int64], periods: [(Int64, String)])) {
    let periods = ClickHouseReports.periods(of: `case`.days, origin: 10 * Self.day)
    #expect(periods.map(\.period) == `case`.periods.map(\.0))
    #expect(periods.map(\.within) == `case`.periods.map(\.1))
  }

  static let hour: Int64 = 3_600_000

  static func open(_ engine: Engine) async throws -> ClickHouseEventStore {
    let (written, _) = try await engine.openReports(Generated.batches)
    return try #require(written as? ClickHouseEventStore)
  }

  @Test(arguments: engines)
  func closedDaysMatchTheEventsThroughLateEventsErasureAndPruning(engine: Engine) async throws {
    let store = try await Self.open(engine)
    // Ten days built: the build ends the day before, and is not made twice.
    #expect(try await store.buildDeviceSets(before: Generated.start + 10 * Self.day) == 64)
    #expect(try await store.buildDeviceSets(before: Generated.start + 10 * Self.day + 3_600_000) == 0)
    try await Self.expectSame(store, "ten days built")

    _ = try await store.write(DeviceSetTests.late())
    _ = try await store.write(Generated.batches[0])
    try await Self.expectSame(store, "after late and resent events")

    #expect(try await store.buildDeviceSets(before: .max) == 64)
    #expect(try await store.buildDeviceSets(before: .max) == 0)
    try await Self.expectSame(store, "every day built")

    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: "device-7", userID: nil)!).rows > 0)
    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: nil, userID: "user-2")!).rows > 0)
    try await Self.expectSame(store, "after erasure")
    // Erasure stopped every build being read: the next one is made again.
    #expect(try await store.buildDeviceSets(before: .max) == 64)
    try await Self.expectSame(store, "after erasure, built again")

    let pruned = try await store.prune(
      PruneCutoffs(defaultCutoff: Generated.start + 2 * Self.day + 90 * 60_000, perApp: [:]))
    #expect(pruned > 0)
    try await Self.expectSame(store, "after pruning")
    #expect(try await store.buildDeviceSets(before: .max) == 64)
    try await Self.expectSame(store, "after pruning, built again")
    try await store.close()
  }

  /// Builds running beside late writes into the days they build, or beside each other, leave no
  /// stale build read.
  @Test(arguments: engines)
  func buildsBesideLateWritesLeaveNothingStale(engine: Engine) async throws {
    let store = try await Self.open(engine)
    for round in 0..<4 {
      async let built = store.buildDeviceSets(before: Generated.start + Int64(5 + round) * Self.day)
      _ = try await store.write(DeviceSetTests.late(round))
      _ = try await built
    }
    try await Self.expectSame(store, "builds beside late writes")
    // Two collectors building the same days at once: two builds, the newer one read.
    async let one = store.buildDeviceSets(before: Generated.start + 12 * Self.day)
    async let two = store.buildDeviceSets(before: Generated.start + 12 * Self.day)
    #expect(try await [one, two].max() == 64)
    try await Self.expectSame(store, "two builds at once")
    try await store.close()
  }

  /// Top events, sessions and the overview read the build: a device and a session added to it on purpose show,
  /// until a late event changes that day, which is then read from the hours.
  @Test(arguments: engines)
  func reportsReadTheBuildOfDaysWithoutLateEvents(engine: Engine) async throws {
    let store = try await Self.open(engine)
    #expect(try await store.buildDeviceSets(before: .max) == 64)
    let filter = Generated.filters[0]
    let honest = try await ClickHouseReports(store: store, rollups: false).topEvents(filter, limit: 100)
    #expect(try await ClickHouseReports(store: store).topEvents(filter, limit: 100) == honest)

    let client = try ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
    let table = "\(store.database).closed_name_devices"
    let build = try #require(try await client.rows("SELECT max(build) AS b FROM \(table)").first?["b"].int)
    // The late events' day (``DeviceSetTests/late(_:)``), as one more device sending `app_open`.
    let builds = "\(store.database).closed_records\(engine == .clickhouseCluster ? "_local" : "")"
    let first = try #require(
      try await client.rows("SELECT first_day AS f FROM \(builds) WHERE build = \(build)").first?["f"].int)
    let lateDay = (Generated.start + 3 * Self.day) / Self.day
    try await client.execute(
      "INSERT INTO \(table) (build, app, name, device, days) VALUES "
        + "(\(build), 'shop', 'app_open', 12345, \(UInt64(1) << UInt64(lateDay - first)))",
      settings: ["insert_distributed_sync": "1"])
    // And one more session that day, of no events (so the day's totals stay those of the rollups).
    let sessions = try await ClickHouseReports(store: store, rollups: false).sessions(filter)
    #expect(try await ClickHouseReports(store: store).sessions(filter) == sessions)
    try await client.execute(
      "INSERT INTO \(store.database).closed_sessions (build, app, day, session, keyed, alone, first_ms, last_ms, "
        + "events) VALUES (\(build), 'shop', \(lateDay), 12345, 1, 1, 0, 0, 0)",
      settings: ["insert_distributed_sync": "1"])
    let damaged = try await ClickHouseReports(store: store).topEvents(filter, limit: 100)
    #expect(damaged != honest)
    #expect(try await ClickHouseReports(store: store, rollups: false).topEvents(filter, limit: 100) == honest)
    #expect(try await ClickHouseReports(store: store).sessions(filter).count == sessions.count + 1)
    try await client.execute(
      "INSERT INTO \(store.database).closed_devices (build, app, device, days) VALUES "
        + "(\(build), 'shop', 12345, \(UInt64(1) << UInt64(lateDay - first)))",
      settings: ["insert_distributed_sync": "1"])
    let overview = try await ClickHouseReports(store: store, rollups: false).overview(filter)
    let damagedOverview = try await ClickHouseReports(store: store).overview(filter).current
    #expect(damagedOverview.sessions == overview.current.sessions + 1)
    #expect(damagedOverview.devices == overview.current.devices + 1)
    #expect(damagedOverview.people == overview.current.people + 1)
    // Retention reads the devices' masks: the added device is one more unit in its day's cohort.
    let retention = try await Self.retention(store, filter, .day, rollups: false)
    let damagedRetention = try await Self.retention(store, filter, .day, rollups: true)
    let size = { (found: Retention) in found.cohorts.first { $0.start == lateDay * Self.day }?.size ?? 0 }
    #expect(size(damagedRetention) == size(retention) + 1)
    // Active users read the devices' masks too: the added device is one more active in the range.
    let active = try await ClickHouseReports(store: store, rollups: false).activeDevices(filter)
    let damagedActive = try await ClickHouseReports(store: store).activeDevices(filter)
    #expect(damagedActive.monthly == active.monthly + 1 && damagedActive.new == active.new + 1, "\(damagedActive)")

    _ = try await store.write(DeviceSetTests.late())
    let fixed = try await ClickHouseReports(store: store).topEvents(filter, limit: 100)
    #expect(fixed == (try await ClickHouseReports(store: store, rollups: false).topEvents(filter, limit: 100)))
    #expect(fixed != honest)
    #expect(
      try await ClickHouseReports(store: store).overview(filter)
        == ClickHouseReports(store: store, rollups: false).overview(filter))
    // The late day from the hours: were the build still read, the added device would count too.
    #expect(
      try await ClickHouseReports(store: store).activeDevices(filter)
        == ClickHouseReports(store: store, rollups: false).activeDevices(filter))
    #expect(
      try await Self.retention(store, filter, .day, rollups: true)
        == Self.retention(store, filter, .day, rollups: false))
    let late = try await ClickHouseReports(store: store, rollups: false).sessions(filter)
    #expect(try await ClickHouseReports(store: store).sessions(filter) == late)
    #expect(late != sessions)
    try await store.close()
  }
}
