import CollectorReports
import CollectorStore
import Testing

/// Funnels over step events that share a millisecond, on every engine: they count in tracking order
/// (by event id), as the walk takes them, and only the units holding them are walked apart from the
/// others (ClickHouse's packed events carry no id).
@Suite("Funnel steps in one millisecond")
struct FunnelTieTests {
  static let steps = ["product_viewed", "add_to_cart", "purchase"]

  /// One event of `device` at minute `minute` of D2 10:00 (or at `time`), with the id `id` (ids order
  /// one millisecond's events as they were tracked).
  static func event(
    _ device: String, _ name: String, _ minute: Int64, at time: Int64? = nil, id: String, user: String? = nil
  ) -> StoredEvent {
    var event = Fixture.event(
      Fixture.Device(id: device, platform: "iOS", app: "1.0", os: "17"), name, time ?? Fixture.at(2, 10, minute),
      session: 1)
    event.eventID = id
    event.userID = user
    return event
  }

  /// - T: the cart (tracked first) and the view in one millisecond, then the purchase: the cart came
  ///   before the view, so T reaches the first step only.
  /// - W: the view (tracked first) and the cart in one millisecond, then the purchase: all three.
  ///   K3 the same, and K4 as T (two devices whose 64-bit hashes are above `Int64.max`, as half are).
  /// - U: view, cart and purchase a minute apart: all three. V, u2's only device: a view only.
  /// - u1's phone P1 views; their tablet P2 adds to the cart and buys: the person reaches all three,
  ///   the phone the first step, the tablet none.
  /// - X: seventeen views in one millisecond (more than any fixed number of ties a query could rank):
  ///   the first step.
  /// - u5's phone H1 views (tracked first) and adds to the cart in one millisecond; their tablet H3
  ///   buys a minute later (on the other shard of the cluster): the person reaches all three, the
  ///   phone two steps, the tablet none.
  static let batch = StoreBatch(
    events: (10...26).map { event("X", "product_viewed", 0, id: "X-\($0)") } + [
      event("T", "add_to_cart", 0, id: "T-1"), event("T", "product_viewed", 0, id: "T-2"),
      event("T", "purchase", 1, id: "T-3"),
      event("W", "product_viewed", 0, id: "W-1"), event("W", "add_to_cart", 0, id: "W-2"),
      event("W", "purchase", 1, id: "W-3"),
      event("K3", "product_viewed", 0, id: "K3-1"), event("K3", "add_to_cart", 0, id: "K3-2"),
      event("K3", "purchase", 1, id: "K3-3"),
      event("K4", "add_to_cart", 0, id: "K4-1"), event("K4", "product_viewed", 0, id: "K4-2"),
      event("K4", "purchase", 1, id: "K4-3"),
      event("U", "product_viewed", 0, id: "U-1"), event("U", "add_to_cart", 1, id: "U-2"),
      event("U", "purchase", 2, id: "U-3"),
      event("V", "product_viewed", 0, id: "V-1", user: "u2"),
      event("P1", "product_viewed", 0, id: "P1-1", user: "u1"), event("P2", "add_to_cart", 1, id: "P2-1", user: "u1"),
      event("P2", "purchase", 2, id: "P2-2", user: "u1"),
      event("H1", "product_viewed", 0, id: "H1-1", user: "u5"), event("H1", "add_to_cart", 0, id: "H1-2", user: "u5"),
      event("H3", "purchase", 1, id: "H3-1", user: "u5"),
    ])

  @Test(arguments: Engine.available, [ReportUnit.device, .person])
  func stepsInOneMillisecondCountInTrackingOrder(engine: Engine, unit: ReportUnit) async throws {
    let (store, reports) = try await engine.openReports([Self.batch])
    var filter = Fixture.twoWeeks
    filter.unit = unit
    let funnel = try await reports.funnel(filter, steps: Self.steps, window: 3_600_000)
    // Devices: T, W, K3, K4, U, V, P1, X and H1 view; W, K3, U and H1 add; W, K3 and U buy. People:
    // u1 and u5 too.
    #expect(funnel.steps.map(\.devices) == (unit == .device ? [9, 4, 3] : [9, 5, 5]))
    for listed in [1, 2, 3] {
      guard let limited = FunnelRepeatTests.withSmallLimits(reports, tiedListed: listed) else { break }
      let inBatches = try await limited.funnel(filter, steps: Self.steps, window: 3_600_000)
      #expect(inBatches.steps.map(\.devices) == funnel.steps.map(\.devices), "tied units listed: \(listed)")
    }
    // The walk the drill-downs read agrees, and names u1's devices as u1.
    let events = try await reports.funnelEvents(filter, steps: Self.steps, limit: nil)
    #expect(Funnel.reached(events, steps: Self.steps, window: 3_600_000) == funnel.steps.map(\.devices))
    #expect(Set(events.map(\.unit)).isSuperset(of: ["u:u1", "u:u2", "u:u5"]) == (unit == .person))
    try await store.close()
  }

  /// Sixty days, more than two spans of 2^31 ms (what a signed 32-bit time holds; `B`): chains in the
  /// first, second and third block, one across the first boundary, and a second start that alone
  /// reaches the cart, within an hour, on every engine.
  /// - A: all three steps an hour in; B: all three an hour into the second block.
  /// - C: views 10 minutes before the first boundary, adds 5 and buys 20 minutes after it: all three.
  /// - D: views an hour into the third block, adds 90 minutes later: the first step.
  /// - E: adds to the cart only. F: views a minute before the boundary, again 70 minutes after it,
  ///   and adds 10 minutes later: two steps.
  /// - G: views an hour in, and adds 2^32 ms (49.7 days) and 10 minutes later: the first step (a
  ///   32-bit time from the first block's start would put the two 10 minutes apart).
  @Test(arguments: Engine.available)
  func chainsInEveryBlockOfALongRange(engine: Engine) async throws {
    let (hour, minute, block) = (Int64(3_600_000), Int64(60_000), Int64(Int32.max))
    let from = Fixture.d0
    let plan: [(String, String, Int64)] = [
      ("A", "product_viewed", hour), ("A", "add_to_cart", hour + minute), ("A", "purchase", hour + 2 * minute),
      ("B", "product_viewed", block + hour), ("B", "add_to_cart", block + hour + minute),
      ("B", "purchase", block + hour + 2 * minute),
      ("C", "product_viewed", block - 10 * minute), ("C", "add_to_cart", block + 5 * minute),
      ("C", "purchase", block + 20 * minute),
      ("D", "product_viewed", 2 * block + hour), ("D", "add_to_cart", 2 * block + hour + 90 * minute),
      ("E", "add_to_cart", block + minute),
      ("F", "product_viewed", block - minute), ("F", "product_viewed", block + 70 * minute),
      ("F", "add_to_cart", block + 80 * minute),
      ("G", "product_viewed", hour), ("G", "add_to_cart", (1 << 32) + hour + 10 * minute),
    ]
    let events = plan.enumerated().map { index, step in
      Self.event(step.0, step.1, 0, at: from + step.2, id: "\(step.0)-\(index)")
    }
    let (store, reports) = try await engine.openReports([StoreBatch(events: events)])
    let filter = try ReportFilter(app: "shop", from: from, to: from + 60 * Fixture.day, unit: .device)
    let funnel = try await reports.funnel(filter, steps: Self.steps, window: hour)
    #expect(funnel.steps.map(\.devices) == [6, 4, 3])
    try await store.close()
  }
}
