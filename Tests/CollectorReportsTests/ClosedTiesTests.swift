import CollectorClickHouse
import CollectorReports
import CollectorStore
import Testing

/// A funnel's tied milliseconds (two step events of different names in one millisecond of one
/// device) in ClickHouse's closed days are ordered by the build's ties, as the events' ids order
/// them; a person's ties, and any the build lacks, are read from the events.
@Suite("ClickHouse's built ties order a funnel's milliseconds")
struct ClosedTiesTests {
  @Test(arguments: ClosedDaysTests.engines, [ReportUnit.device, .person])
  func builtTiesOrderAFunnelsMillisecondsAsTheEvents(engine: Engine, unit: ReportUnit) async throws {
    // FunnelTieTests' units, and u7, whose phone Q1 views (tracked first) in the millisecond their
    // tablet Q2 adds to the cart; Q2 buys a minute later: two devices in one millisecond, which only
    // the events' ids order.
    var batch = FunnelTieTests.batch
    batch.events += [
      FunnelTieTests.event("Q1", "product_viewed", 0, id: "Q1-1", user: "u7"),
      FunnelTieTests.event("Q2", "add_to_cart", 0, id: "Q2-1", user: "u7"),
      FunnelTieTests.event("Q2", "purchase", 1, id: "Q2-2", user: "u7"),
    ]
    let (written, _) = try await engine.openReports([batch])
    let store = try #require(written as? ClickHouseEventStore)
    #expect(try await store.buildDeviceSets(before: .max) > 0)
    // D0 to D2, every day built (the build ends with the newest event's day, D2).
    let filter = try ReportFilter(app: "shop", from: Fixture.d0, to: Fixture.d0 + 3 * 86_400_000, unit: unit)
    let (steps, window) = (FunnelTieTests.steps, Int64(3_600_000))
    let served = { try await ClickHouseReports(store: store).funnel(filter, steps: steps, window: window) }
    let honest = try await ClickHouseReports(store: store, rollups: false).funnel(filter, steps: steps, window: window)
    #expect(honest.steps.map(\.devices) == (unit == .device ? [10, 4, 3] : [10, 6, 6]))
    #expect(try await served() == honest)
    // The build holds each device's tied millisecond, its names in tracking order: T, W, K3, K4, H1.
    let client = try ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
    let ties = "\(store.database).closed_name_ties"
    let held = try await client.rows("SELECT arrayStringConcat(names, ',') AS n FROM \(ties)").compactMap {
      $0["n"].text
    }
    #expect(
      held.sorted() == [
        "add_to_cart,product_viewed", "add_to_cart,product_viewed", "product_viewed,add_to_cart",
        "product_viewed,add_to_cart", "product_viewed,add_to_cart",
      ])
    guard engine == .clickhouse else { return try await store.close() }
    // Without the build's ties every tied millisecond is read from the events: the same answer.
    try await client.execute("CREATE TABLE \(ties)_kept ENGINE = Memory AS SELECT * FROM \(ties)")
    let build = try #require(try await client.rows("SELECT max(build) AS b FROM \(ties)").first?["b"].int)
    try await client.execute("ALTER TABLE \(ties) DROP PARTITION \(build)")
    #expect(try await served() == honest)
    // W's and H1's milliseconds reversed in the build (the cart first): W and H1 now reach the view
    // alone, and so does u5 (H1's person), so the ties are read from the build, a person's too; u7's
    // are read from the events still.
    try await client.execute(
      "INSERT INTO \(ties) SELECT build, app, device, time, "
        + "if(device IN (cityHash64('W'), cityHash64('H1')), arrayReverse(names), names) FROM \(ties)_kept")
    #expect(try await served().steps.map(\.devices) == (unit == .device ? [10, 2, 2] : [10, 4, 4]))
    try await store.close()
  }
}
