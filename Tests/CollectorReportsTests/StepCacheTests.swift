import CollectorReports
import CollectorStore
import Testing

/// The funnel's step cache (``StepCacheBuild``): funnels read it where hours are built and answer
/// as the events do, ties across a person's devices included; a damaged cache shows, and a late
/// event in its hour sends the funnel back to the events there.
@Suite("The funnel's step cache answers as the events do")
struct StepCacheTests {
  static let steps = FunnelTieTests.steps

  /// The tie fixture, and ties across one person's devices: u3's tablet views and their phone adds
  /// to the cart in one millisecond, the view tracked first (then the phone buys: all three steps);
  /// u4's phone adds to the cart and their tablet views in one millisecond, the cart tracked first
  /// (then the tablet buys: the first step only, since the view came after the cart).
  static let batch = StoreBatch(
    events: FunnelTieTests.batch.events + [
      FunnelTieTests.event("Q2", "product_viewed", 5, id: "Q-1", user: "u3"),
      FunnelTieTests.event("Q1", "add_to_cart", 5, id: "Q-2", user: "u3"),
      FunnelTieTests.event("Q1", "purchase", 6, id: "Q-3", user: "u3"),
      FunnelTieTests.event("R1", "add_to_cart", 7, id: "R-1", user: "u4"),
      FunnelTieTests.event("R2", "product_viewed", 7, id: "R-2", user: "u4"),
      FunnelTieTests.event("R2", "purchase", 8, id: "R-3", user: "u4"),
    ])

  @Test(arguments: Engine.sql, [ReportUnit.device, .person])
  func funnelsReadTheCacheOfBuiltHoursAndAnswerAsTheEvents(engine: Engine, unit: ReportUnit) async throws {
    let store = try await engine.open([Self.batch])
    let keeper = try #require(store as? any DeviceSetKeeping)
    let tables = try #require(store.deviceSets)
    var filter = Fixture.twoWeeks
    filter.unit = unit
    let fromEvents = SQLReports(store: store, rollups: false)
    let honest = try await fromEvents.funnel(filter, steps: Self.steps, window: 3_600_000)
    // Devices: T, W, K3, K4, U, V, P1, X, H1, Q2, R2 view; W, K3, U and H1 add; W, K3 and U buy
    // (Q1 and R1 never view). People: u1, u3 and u5 add and buy too, u4 views only (its cart came
    // before its view).
    #expect(honest.steps.map(\.devices) == (unit == .device ? [11, 4, 3] : [11, 6, 6]))
    #expect(try await keeper.buildDeviceSets(before: .max) > 0)
    let cached = try #require(try await store.read("SELECT count(*) AS n FROM \(tables.steps)", []).first?["n"].int)
    #expect(cached > 0)
    let served = SQLReports(store: store)
    #expect(try await served.funnel(filter, steps: Self.steps, window: 3_600_000) == honest)
    // Each unit's path in the same order as read from the events (the ties decide who converts).
    let paths = try await served.funnelEvents(filter, steps: Self.steps, limit: nil)
    let truth = try await fromEvents.funnelEvents(filter, steps: Self.steps, limit: nil)
    #expect(Self.paths(paths) == Self.paths(truth))
    #expect(Funnel.reached(paths, steps: Self.steps, window: 3_600_000) == honest.steps.map(\.devices))

    // Damaged on purpose (the purchases' rows gone, the marks kept): the served funnel shows it.
    try await store.execute("DELETE FROM \(tables.steps) WHERE name = 'purchase'")
    let damaged = try await served.funnel(filter, steps: Self.steps, window: 3_600_000)
    #expect(damaged.steps.last?.devices == 0)
    #expect(try await fromEvents.funnel(filter, steps: Self.steps, window: 3_600_000) == honest)

    // A late event in that hour deletes its marks and rows: the funnel reads its events again.
    var late = FunnelTieTests.event("Z", "product_viewed", 30, id: "Z-1")
    late.userID = nil
    _ = try await store.write(StoreBatch(events: [late]))
    let relaid = try await fromEvents.funnel(filter, steps: Self.steps, window: 3_600_000)
    #expect(relaid.steps.first?.devices == honest.steps[0].devices + 1)
    #expect(try await served.funnel(filter, steps: Self.steps, window: 3_600_000) == relaid)
    try await store.close()
  }

  /// Each unit's step events in order, as `name@time`.
  static func paths(_ events: [FunnelEvent]) -> [String: [String]] {
    Dictionary(grouping: events, by: \.unit).mapValues { $0.map { "\($0.name)@\($0.time)" } }
  }

  /// A range off whole hours, or one with an app name, reads the events (the cache keeps neither).
  @Test(arguments: Engine.sql)
  func rangesTheCacheCannotAnswerReadTheEvents(engine: Engine) async throws {
    let store = try await engine.open([Self.batch])
    let keeper = try #require(store as? any DeviceSetKeeping)
    try await keeper.buildDeviceSets(before: .max)
    try await store.execute("DELETE FROM \(try #require(store.deviceSets).steps) WHERE name = 'purchase'")
    var ragged = Fixture.twoWeeks
    ragged.to -= 1
    var named = Fixture.twoWeeks
    named.appName = "Shop"
    for filter in [ragged, named] {
      let served = try await SQLReports(store: store).funnel(filter, steps: Self.steps, window: 3_600_000)
      let read = try await SQLReports(store: store, rollups: false).funnel(filter, steps: Self.steps, window: 3_600_000)
      #expect(served == read)
    }
    try await store.close()
  }

  /// Events of one millisecond are ranked by their ids across every row; times before the hour's
  /// start (before 1970) keep their sign; the bytes hold three numbers per event.
  @Test(arguments: [
    [("b", Int64(5)), ("a", 5), ("c", 6)],
    [("z", -1), ("y", -1)],
    [("e-2", 3_599_999), ("e-10", 3_599_999), ("e-1", 3_599_999)],
  ])
  func eventsOfOneMillisecondAreRankedByTheirIDs(events: [(id: String, time: Int64)]) {
    var build = StepCacheBuild()
    let key = StepCacheBuild.Key(hour: 0, name: "view", platform: "iOS", appVersion: "1", osVersion: "18")
    for (number, event) in events.enumerated() {
      build.add(key, number: UInt32(number), time: event.time, id: Array(event.id.utf8))
    }
    let rows = build.finish()
    #expect(rows.count == 1)
    let numbers = rows[0].numbers
    #expect(numbers.count == 3 * events.count)
    for (index, event) in events.enumerated() {
      guard let at = stride(from: 0, to: numbers.count, by: 3).first(where: { numbers[$0] == UInt32(index) }) else {
        Issue.record("event \(index) missing")
        continue
      }
      #expect(Int64(Int32(bitPattern: numbers[at + 1])) == event.time)
      let earlier = events.filter { $0.time == event.time && $0.id.utf8.lexicographicallyPrecedes(event.id.utf8) }
      #expect(numbers[at + 2] == UInt32(earlier.count), "rank of \(event.id)")
    }
    var decoded: [UInt32] = []
    StepCacheCoding.encode(numbers).withUnsafeBytes { DeviceSetCoding.decode($0, into: &decoded) }
    #expect(decoded == numbers)
  }
}
