import CollectorClickHouse
import CollectorPostgres
import CollectorReports
import CollectorSQLite
import CollectorStore
import CollectorWire
import Foundation
import TestSupport
import Testing
import WireJSON

enum Engine: String, CaseIterable, CustomStringConvertible, Sendable {
  case sqlite, postgres, clickhouse, clickhouseCluster
  var description: String { rawValue }

  /// Every engine configured here: SQLite always, PostgreSQL and ClickHouse when their test servers
  /// are (always in `.ci/run`).
  static var available: [Engine] {
    [.sqlite] + (PostgresTestServer.url == nil ? [] : [.postgres])
      + (ClickHouseTestServer.url == nil ? [] : [.clickhouse])
      + (ClickHouseTestServer.shardURLs == nil ? [] : [.clickhouseCluster])
  }

  /// The SQL engines configured here (the ones with rollups).
  static var sql: [Engine] { available.filter { $0 == .sqlite || $0 == .postgres } }

  /// A fresh SQL store holding `batches` (the fixture unless told), written as the collector writes.
  func open(_ batches: [StoreBatch] = [Fixture.batch]) async throws -> any EventStore & BulkLoading {
    let store: any EventStore & BulkLoading
    switch self {
    case .sqlite:
      let directory = TestFiles.unique("reports")
      store = try SQLiteEventStore(path: directory.appendingPathComponent("collector.sqlite").path)
    case .postgres:
      store = try PostgresEventStore(url: PostgresTestServer.url!, schema: PostgresTestServer.uniqueSchema("reports"))
    case .clickhouse, .clickhouseCluster:
      preconditionFailure("ClickHouse keeps no rollups: use openReports")
    }
    try await store.migrate()
    for batch in batches { _ = try await store.write(batch) }
    return store
  }

  /// A fresh store of this engine holding `batches`, and its reports.
  func openReports(_ batches: [StoreBatch] = [Fixture.batch]) async throws -> (any EventStore, any ReportEngine) {
    guard let store = try clickHouse() else {
      let store = try await open(batches)
      return (store, SQLReports(store: store))
    }
    try await store.migrate()
    for batch in batches { _ = try await store.write(batch) }
    return (store, ClickHouseReports(store: store))
  }

  /// A fresh ClickHouse store of this engine (one server, or two shards), `nil` for the SQL engines.
  func clickHouse(database: String = ClickHouseTestServer.uniqueDatabase()) throws -> ClickHouseEventStore? {
    switch self {
    case .sqlite, .postgres: return nil
    case .clickhouse: return try ClickHouseEventStore(url: ClickHouseTestServer.url!, database: database)
    case .clickhouseCluster:
      let shards = ClickHouseTestServer.shardURLs!
      return try ClickHouseEventStore(
        url: shards[0], database: database, cluster: ClickHouseTestServer.cluster, shardURLs: shards)
    }
  }
}

/// A small, fixed data set whose every report is computed by hand below.
///
/// Range: two weeks from Monday 2026-11-02 (D0) 00:00 UTC. Four devices:
/// - A (iOS, app 9.0, OS 17.4): D0 10:00 app_open, 10:05 product_viewed p1, 10:10 add_to_cart,
///   10:20 purchase (session 100); D7 09:00 app_open (session 200).
/// - B (Android, 10.0, 14): D0 12:00 app_open, 12:01 product_viewed p1, 12:30 add_to_cart (session
///   300); D1 08:00 product_viewed p2 (session 400).
/// - C (iOS, 10.0, 17.4): D1 09:00 app_open, 09:02 product_viewed p2 (session 500); D8 10:00
///   app_open (600); D14 10:00 app_open (700, after the range).
/// - D (iOS, 9.0, 16.0): D-3 app_open (session 50, before the range); D2 10:00 app_open, 10:15
///   product_viewed p3 (session 800).
/// Counters: A Foregrounded 5 (D0), B Foregrounded 3 (D1), C Shared 2 (D8).
enum Fixture {
  static let day: Int64 = 86_400_000
  static let d0 = ReportTime.parse("2026-11-02")!
  static func at(_ day: Int64, _ hour: Int64, _ minute: Int64) -> Int64 {
    d0 + day * Fixture.day + hour * 3_600_000 + minute * 60_000
  }

  struct Device {
    let id: String
    let platform: String
    let app: String
    let os: String
  }
  static let a = Device(id: "A", platform: "iOS", app: "9.0", os: "17.4")
  static let b = Device(id: "B", platform: "Android", app: "10.0", os: "14")
  static let c = Device(id: "C", platform: "iOS", app: "10.0", os: "17.4")
  static let d = Device(id: "D", platform: "iOS", app: "9.0", os: "16.0")

  static func context(_ device: Device) -> EventContext {
    EventContext([
      .appName: "Shop", .appVersion: device.app, .osName: device.platform, .osVersion: device.os,
      .platform: device.platform, .libraryName: "CoreTracker/1.0.0",
    ])
  }

  nonisolated(unsafe) static var counter = 0
  static func event(_ device: Device, _ name: String, _ time: Int64, session: Int64, product: String? = nil)
    -> StoredEvent
  {
    let parameters = product.map { #"{"product_id":"\#($0)","in_stock":true}"# } ?? "{}"
    return StoredEvent(
      app: "shop", eventID: "\(device.id)-\(name)-\(time)", name: name, kind: "action", occurredAt: time,
      utcOffsetMinutes: 180, receivedAt: time, deviceID: device.id, userID: nil, sessionID: session,
      context: context(device), parametersJSON: parameters)
  }

  static let batch = StoreBatch(
    events: [
      event(a, "app_open", at(0, 10, 0), session: 100),
      event(a, "product_viewed", at(0, 10, 5), session: 100, product: "p1"),
      event(a, "add_to_cart", at(0, 10, 10), session: 100), event(a, "purchase", at(0, 10, 20), session: 100),
      event(a, "app_open", at(7, 9, 0), session: 200),
      event(b, "app_open", at(0, 12, 0), session: 300),
      event(b, "product_viewed", at(0, 12, 1), session: 300, product: "p1"),
      event(b, "add_to_cart", at(0, 12, 30), session: 300),
      event(b, "product_viewed", at(1, 8, 0), session: 400, product: "p2"),
      event(c, "app_open", at(1, 9, 0), session: 500),
      event(c, "product_viewed", at(1, 9, 2), session: 500, product: "p2"),
      event(c, "app_open", at(8, 10, 0), session: 600), event(c, "app_open", at(14, 10, 0), session: 700),
      event(d, "app_open", at(-3, 10, 0), session: 50), event(d, "app_open", at(2, 10, 0), session: 800),
      event(d, "product_viewed", at(2, 10, 15), session: 800, product: "p3"),
    ],
    counters: [
      StoredCounter(
        app: "shop", counterID: "c1", deviceID: "A", name: "Foregrounded", count: 5, firstCountedAt: at(0, 9, 0),
        receivedAt: at(0, 9, 0), context: context(a)),
      StoredCounter(
        app: "shop", counterID: "c2", deviceID: "B", name: "Foregrounded", count: 3, firstCountedAt: at(1, 9, 0),
        receivedAt: at(1, 9, 0), context: context(b)),
      StoredCounter(
        app: "shop", counterID: "c3", deviceID: "C", name: "Shared", count: 2, firstCountedAt: at(8, 9, 0),
        receivedAt: at(8, 9, 0), context: context(c)),
    ]
  )

  static var twoWeeks: ReportFilter { try! ReportFilter(app: "shop", from: d0, to: d0 + 14 * day) }
}

private func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }

@Suite("Reports on hand-computed data")
struct ReportTests {
  @Test("PostgreSQL is configured when running in CI")
  func postgresInCI() {
    if PostgresTestServer.isCI { #expect(PostgresTestServer.url != nil) }
  }

  @Test(arguments: Engine.available)
  func overviewAgainstThePreviousRange(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let overview = try await reports.overview(Fixture.twoWeeks)
    #expect(overview.current == .init(events: 14, devices: 4, people: 4, sessions: 7, counters: 10))
    #expect(overview.previous == .init(events: 1, devices: 1, people: 1, sessions: 1, counters: 0))
    let android = try await reports.overview(
      try ReportFilter(app: "shop", from: Fixture.d0, to: Fixture.d0 + 14 * Fixture.day, platform: "Android"))
    #expect(android.current == .init(events: 4, devices: 1, people: 1, sessions: 2, counters: 3))
    try await store.close()
  }

  /// People by hand: A browses anonymously then signs in as u1, B is u1's tablet, C never signs in,
  /// D is first u2, later u1 (a shared device stays u2's). A later batch brings D's earliest event,
  /// identified as u1: D becomes u1's, by event time, not by arrival. Whole hours read the rollups,
  /// other ranges the events: both count the same people. On the SQL engines the mapping is rebuilt
  /// from the events, as the migration that adds it does.
  @Test(arguments: Engine.available)
  func peopleCountEachPersonOnceAcrossTheirDevices(engine: Engine) async throws {
    func identified(_ event: StoredEvent, _ user: String) -> StoredEvent {
      var event = event
      event.userID = user
      return event
    }
    let first = StoreBatch(events: [
      Fixture.event(Fixture.a, "browse", Fixture.at(0, 10, 0), session: 1),
      identified(Fixture.event(Fixture.a, "buy", Fixture.at(0, 11, 0), session: 1), "u1"),
      identified(Fixture.event(Fixture.b, "browse", Fixture.at(1, 9, 0), session: 2), "u1"),
      Fixture.event(Fixture.c, "browse", Fixture.at(1, 9, 0), session: 3),
      identified(Fixture.event(Fixture.d, "browse", Fixture.at(2, 9, 0), session: 4), "u2"),
      identified(Fixture.event(Fixture.d, "buy", Fixture.at(3, 9, 0), session: 5), "u1"),
    ])
    let (store, reports) = try await engine.openReports([first])
    let hours = Fixture.twoWeeks
    let minutes = try ReportFilter(app: "shop", from: Fixture.d0 + 60_000, to: Fixture.d0 + 14 * Fixture.day - 60_000)
    for filter in [hours, minutes] {
      let figures = try await reports.overview(filter).current
      #expect(figures.devices == 4 && figures.people == 3, "\(figures)")
    }
    // Events stored before the mapping existed (an upgraded store): its migration, as the rebuild,
    // fills the mapping from the events.
    if let bulk = store as? any BulkLoading, let persons = bulk.personsTable {
      try await bulk.execute("DELETE FROM \(persons)")
      #expect(try await reports.overview(hours).current.people == 4)
      try await bulk.rebuildRollups()
      #expect(try await reports.overview(hours).current.people == 3)
    }
    let late = identified(Fixture.event(Fixture.d, "open", Fixture.at(0, 8, 0), session: 6), "u1")
    _ = try await store.write(StoreBatch(events: [late]))
    for filter in [hours, minutes] {
      let figures = try await reports.overview(filter).current
      #expect(figures.devices == 4 && figures.people == 2, "\(figures)")
    }
    try await store.close()
  }

  @Test(arguments: Engine.available)
  func topEventsParameterValuesAndCounters(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let top = try await reports.topEvents(Fixture.twoWeeks)
    #expect(top.rows.map(\.name) == ["app_open", "product_viewed", "add_to_cart", "purchase"])
    #expect(top.rows.map(\.count) == [6, 5, 2, 1])
    #expect(top.rows.map(\.devices) == [4, 4, 2, 1])
    #expect(top.rows.map { rounded($0.share) } == [42.86, 35.71, 14.29, 7.14])
    // A share is of all the events, whatever the limit cuts off.
    let first = try await reports.topEvents(Fixture.twoWeeks, limit: 2)
    #expect(first.rows.map { rounded($0.share) } == [42.86, 35.71])
    let one = try await reports.parameterValues(
      Fixture.twoWeeks, event: "product_viewed", parameter: "product_id", limit: 1)
    #expect(one.rows.map { rounded($0.share) } == [40])
    let values = try await reports.parameterValues(Fixture.twoWeeks, event: "product_viewed", parameter: "product_id")
    #expect(values.rows.map(\.name) == ["p1", "p2", "p3"] && values.rows.map(\.count) == [2, 2, 1])
    let flags = try await reports.parameterValues(Fixture.twoWeeks, event: "product_viewed", parameter: "in_stock")
    #expect(flags.rows.map(\.name) == ["true"])
    let counters = try await reports.counters(Fixture.twoWeeks)
    #expect(counters.rows.map(\.name) == ["Foregrounded", "Shared"] && counters.rows.map(\.count) == [8, 2])
    #expect(counters.rows.map(\.devices) == [2, 1])
    try await store.close()
  }

  @Test(arguments: Engine.available)
  func breakdownsOrderVersionsAsVersions(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let platforms = try await reports.breakdown(Fixture.twoWeeks, by: .platform)
    #expect(platforms.rows.map(\.name) == ["iOS", "Android"] && platforms.rows.map(\.count) == [10, 4])
    #expect(platforms.rows.map(\.devices) == [3, 1])
    let apps = try await reports.breakdown(Fixture.twoWeeks, by: .appVersion)
    #expect(apps.rows.map(\.name) == ["10.0", "9.0"] && apps.rows.map(\.count) == [7, 7])
    let systems = try await reports.breakdown(Fixture.twoWeeks, by: .osVersion)
    #expect(systems.rows.map(\.name) == ["17.4", "16.0", "14"] && systems.rows.map(\.count) == [8, 2, 4])
    try await store.close()
  }

  @Test(arguments: Engine.available)
  func timeSeriesHasEveryBucket(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let daily = try await reports.timeSeries(Fixture.twoWeeks, bucket: .day)
    #expect(daily.points.count == 14 && daily.points.first?.start == Fixture.d0)
    #expect(daily.points.map(\.count) == [7, 3, 2, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0])
    #expect(daily.points.map(\.devices) == [2, 2, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0])
    let viewed = try await reports.timeSeries(Fixture.twoWeeks, bucket: .day, event: "product_viewed")
    #expect(viewed.points.prefix(3).map(\.count) == [2, 2, 1])
    let firstDay = try ReportFilter(app: "shop", from: Fixture.d0, to: Fixture.d0 + Fixture.day)
    let hourly = try await reports.timeSeries(firstDay, bucket: .hour)
    #expect(hourly.points.count == 24 && hourly.points[10].count == 4 && hourly.points[12].count == 3)
    try await store.close()
  }

  @Test(arguments: Engine.available)
  func activeDevicesNewAndReturning(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    // No device is identified: counted in people (the default), every device is a person.
    let active = try await reports.activeDevices(Fixture.twoWeeks)
    #expect(active == ActiveDevices(daily: 0, weekly: 2, monthly: 4, new: 3, returning: 1, unit: .person))
    var devices = Fixture.twoWeeks
    devices.unit = .device
    #expect(
      try await reports.activeDevices(devices)
        == ActiveDevices(daily: 0, weekly: 2, monthly: 4, new: 3, returning: 1, unit: .device))
    try await store.close()
  }

  @Test(arguments: Engine.available)
  func retentionCohorts(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let weekly = try await reports.retention(Fixture.twoWeeks, period: .week)
    #expect(weekly.cohorts.count == 1)
    #expect(
      weekly.cohorts[0].size == 4 && weekly.cohorts[0].active == [4, 2] && weekly.cohorts[0].retained == [100, 50])
    let threeDays = try ReportFilter(app: "shop", from: Fixture.d0, to: Fixture.d0 + 3 * Fixture.day)
    let daily = try await reports.retention(threeDays, period: .day)
    #expect(daily.cohorts.map(\.start) == [Fixture.d0, Fixture.d0 + Fixture.day, Fixture.d0 + 2 * Fixture.day])
    #expect(daily.cohorts.map(\.active) == [[2, 1, 0], [1, 0], [1]])
    let split = try await reports.retention(Fixture.twoWeeks, period: .week, byAppVersion: true)
    #expect(split.cohorts.map(\.appVersion) == ["9.0", "10.0"])
    #expect(split.cohorts.map(\.active) == [[2, 1], [2, 1]])
    try await store.close()
  }

  @Test(arguments: Engine.available)
  func funnelsWithinAWindow(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let steps = ["product_viewed", "add_to_cart", "purchase"]
    let halfHour = try await reports.funnel(Fixture.twoWeeks, steps: steps, window: 30 * 60_000)
    #expect(halfHour.steps.map(\.devices) == [4, 2, 1])
    #expect(halfHour.steps.map { rounded($0.conversion) } == [100, 50, 25])
    #expect(halfHour.steps.map { rounded($0.dropOff) } == [0, 50, 50])
    let twenty = try await reports.funnel(Fixture.twoWeeks, steps: steps, window: 20 * 60_000)
    #expect(twenty.steps.map(\.devices) == [4, 1, 1])
    let nines = try await reports.funnel(Fixture.twoWeeks, steps: steps, window: 30 * 60_000, appVersion: "9.0")
    #expect(nines.steps.map(\.devices) == [2, 1, 1])
    await #expect(throws: FieldError.self) { try await reports.funnel(Fixture.twoWeeks, steps: ["x"], window: 1) }
    try await store.close()
  }

  @Test(arguments: Engine.available)
  func sessionsAndDetailRows(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let sessions = try await reports.sessions(Fixture.twoWeeks)
    #expect(sessions == Sessions(count: 7, medianDuration: 120_000, eventsPerSession: 2))
    var devices: [String] = []
    var cursor: String?
    var pages = 0
    repeat {
      let page = try await reports.eventRows(
        Fixture.twoWeeks, search: EventSearch(event: "product_viewed"), limit: 2, after: cursor)
      devices += page.rows.map(\.deviceID)
      cursor = page.next
      pages += 1
    } while cursor != nil && pages < 10
    #expect(devices == ["D", "C", "B", "B", "A"] && pages == 3)
    let first = try await reports.eventRows(Fixture.twoWeeks, event: "product_viewed", limit: 1)
    // In the order they were tracked, on every engine (PostgreSQL's jsonb alone would put in_stock first).
    let tracked: JSONValue = .object(["product_id": .string("p3"), "in_stock": .bool(true)])
    #expect(first.rows[0].parameters == tracked)
    #expect(first.rows[0].platform == "iOS")
    try await store.close()
  }

  /// Twenty steps, in order, within the window, on every engine: a device doing all twenty, one
  /// doing the first ten, one doing all twenty out of order (it reaches the steps it did in order).
  @Test(arguments: Engine.available)
  func aTwentyStepFunnel(engine: Engine) async throws {
    let steps = (1...20).map { "step_\($0)" }
    let order: [(String, [Int])] = [
      ("all", Array(0..<20)), ("half", Array(0..<10)), ("shuffled", [0, 2, 1] + Array(3..<20)),
    ]
    var events: [StoredEvent] = []
    for (device, taken) in order {
      for (offset, index) in taken.enumerated() {
        events.append(
          Fixture.event(
            Fixture.Device(id: device, platform: "iOS", app: "1.0", os: "17"), steps[index],
            Fixture.at(3, 10, Int64(offset)), session: 1))
      }
    }
    let (store, reports) = try await engine.openReports([StoreBatch(events: events)])
    var filter = Fixture.twoWeeks
    filter.unit = .device
    let funnel = try await reports.funnel(filter, steps: steps, window: 3_600_000)
    #expect(funnel.steps.map(\.devices) == [3, 3] + Array(repeating: 2, count: 8) + Array(repeating: 1, count: 10))
    await #expect(throws: FieldError.self) {
      try await reports.funnel(filter, steps: steps + ["step_21"], window: 3_600_000)
    }
    try await store.close()
  }

  /// Searches over the name, device, context fields and parameters (values as text: `true` for a
  /// boolean): the count, and the devices of the rows newest first, on every engine.
  @Test(arguments: Engine.available)
  func searchesMatchEveryDimension(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let searches: [(query: [String: String], devices: [String])] = [
      (["parameters": "product_id=p1"], ["B", "A"]),
      (["event": "product_viewed", "parameters": "in_stock=true"], ["D", "C", "B", "B", "A"]),
      (["parameters": "in_stock = true; product_id=p2"], ["C", "B"]),
      (["parameters": "in_stock=false"], []),
      (["device": "B"], ["B", "B", "B", "B"]),
      (["osName": "Android", "event": "add_to_cart"], ["B"]),
      (["libraryName": "CoreTracker/1.0.0", "event": "app_open"], ["C", "A", "D", "C", "B", "A"]),
      (["user": "nobody"], []),
    ]
    for (query, devices) in searches {
      let search = try EventSearch { query[$0] }
      let rows = try await reports.eventRows(Fixture.twoWeeks, search: search, limit: 100, after: nil)
      #expect(rows.rows.map(\.deviceID) == devices, "\(query)")
      #expect(try await reports.eventCount(Fixture.twoWeeks, search: search) == Int64(devices.count), "\(query)")
      #expect(try EventSearch { key in search.queryItems.first { $0.0 == key }?.1 } == search, "links keep it")
    }
    #expect(throws: FieldError.self) { try EventSearch { $0 == "parameters" ? "no-equals-sign" : nil } }
    try await store.close()
  }

  @Test func versionsSortAsVersions() {
    let sorted = ["10.0", "9.0", "10.0.1", "1.2-beta", "1.2", "abc", "9.10", "9.9"].map(SemanticVersion.init).sorted()
    #expect(
      sorted == ["1.2-beta", "1.2", "9.0", "9.9", "9.10", "10.0", "10.0.1", "abc"].map(SemanticVersion.init))
  }

  @Test func csvQuotesWhatNeedsQuoting() {
    let table = ReportTable(columns: ["name", "count"], rows: [["a,b", "1"], ["say \"hi\"", "2"], ["plain", "3"]])
    #expect(table.csv == "name,count\r\n\"a,b\",1\r\n\"say \"\"hi\"\"\",2\r\nplain,3\r\n")
  }

  @Test(arguments: [
    ("2026-11-02", Int64(1_793_577_600_000)), ("2026-11-02T10:00:00Z", 1_793_613_600_000),
    ("1793577600000", 1_793_577_600_000), ("2026-11-02T13:00:00+03:00", 1_793_613_600_000),
    ("2026-11-02T05:30:00-04:30", 1_793_613_600_000), ("2026-11-02T10:00:00.25Z", 1_793_613_600_250),
    ("2024-02-29", 1_709_164_800_000), ("2026-11-02T10:00:00+14:00", 1_793_563_200_000),
  ])
  func timesParse(text: String, milliseconds: Int64) {
    #expect(ReportTime.parse(text) == milliseconds)
  }

  /// Days and times that do not exist, offsets no zone has, and anything else: refused, never rolled
  /// over to a neighbouring day (Foundation's ISO 8601 formatter read `2026-02-30` as March 2nd).
  @Test(arguments: [
    "yesterday", "2026-02-30", "2026-02-29", "2100-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-11-00",
    "2026-11-02T24:00:00Z", "2026-11-02T10:60:00Z", "2026-11-02T10:00:60Z", "2026-11-02T10:00:00+25:00",
    "2026-11-02T10:00:00+14:01", "2026-11-02T10:00:00+03:60", "2026-11-02T10:00:00", "2026-11-02T10:00Z",
    "2026-11-02T10:00:00.Z", "2026-11-02 10:00:00Z", "2026-1-02", "+2026-11-02", "2026-11-02T10:00:00Z ",
    "1969-12-31",
  ])
  func impossibleTimesAreRefused(text: String) {
    #expect(ReportTime.parse(text) == nil)
  }
}
