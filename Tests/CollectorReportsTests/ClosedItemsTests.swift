import CollectorClickHouse
import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import Testing

/// Top items from ClickHouse's closed days: the built days' sums are read, a key bought again after
/// the build counts from its first purchase only, and a late order sends its day back to the facts.
@Suite("ClickHouse's closed days give top items as the facts do")
struct ClosedItemsTests {
  static let day: Int64 = 86_400_000

  /// A purchase of one item (`again`, `quantity` units) of transaction `key`, by a device of its own.
  static func purchase(id: String, key: String, day offset: Int64, quantity: Int) -> StoreBatch {
    let time = Generated.start + offset * day + 7 * Generated.hour
    let order =
      #"{"transaction_id":"\#(key)","currency":"TRY","value":10,"#
      + #""items":[{"item_id":"again","item_name":"Again \#(id)","price":2.5,"quantity":\#(quantity)}]}"#
    return StoreBatch(events: [
      StoredEvent(
        app: "shop", eventID: id, name: "purchase", kind: "action", occurredAt: time, utcOffsetMinutes: 0,
        receivedAt: time, deviceID: "device-again", userID: nil, sessionID: 77_000,
        context: EventContext([.appName: "Shop", .appVersion: "10.0", .platform: "iOS"]), parametersJSON: order)
    ])
  }

  static func items(_ store: ClickHouseEventStore, _ filter: ReportFilter, rollups: Bool) async throws -> TopItems {
    try await ClickHouseReports(store: store, rollups: rollups).topItems(filter, category: nil, brand: nil, limit: 100)
  }

  @Test(arguments: ClosedDaysTests.engines)
  func topItemsReadTheBuildAndCountAKeyBoughtAgainOnce(engine: Engine) async throws {
    let store = try await ClosedDaysTests.open(engine)
    let filter = Generated.filters[0]
    // Bought on the build's last day, alone in it.
    _ = try await store.write(Self.purchase(id: "order-b", key: "T-again", day: 11, quantity: 1))
    #expect(try await store.buildDeviceSets(before: Generated.start + 12 * Self.day) == 64)
    #expect(try await Self.items(store, filter, rollups: true) == Self.items(store, filter, rollups: false))

    // Sent again after the build under an earlier id: that one is the transaction's first.
    _ = try await store.write(Self.purchase(id: "order-a", key: "T-again", day: 13, quantity: 5))
    let honest = try await Self.items(store, filter, rollups: false)
    #expect(honest.rows.first { $0.item == "again" }?.units == 5)
    #expect(try await Self.items(store, filter, rollups: true) == honest)

    // An item added to the build on purpose shows, until a late order changes its day.
    let client = try ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
    let table = "\(store.database).closed_item_days\(engine == .clickhouseCluster ? "_local" : "")"
    let build = try #require(try await client.rows("SELECT max(build) AS b FROM \(table)").first?["b"].int)
    let ghostDay = Generated.start / Self.day + 5
    try await client.execute(
      "INSERT INTO \(table) (build, app, day, item, currency, units, revenue, orders, latest) VALUES "
        + "(\(build), 'shop', \(ghostDay), 'ghost', 'TRY', 1, 1000000, 1, '')")
    #expect(try await Self.items(store, filter, rollups: true).rows.first?.item == "ghost")
    _ = try await store.write(Self.purchase(id: "order-late", key: "T-late", day: 5, quantity: 2))
    let late = try await Self.items(store, filter, rollups: false)
    #expect(late != honest)
    #expect(try await Self.items(store, filter, rollups: true) == late)

    // An erasure drops every build's rows at once: nothing erased stays in them.
    let built =
      "SELECT toInt64(count()) AS n FROM system.parts WHERE database = '\(store.database)' AND active "
      + "AND table LIKE 'closed\\_%' AND table NOT LIKE 'closed\\_records%' AND table NOT LIKE 'closed\\_drops%'"
    #expect(try await client.rows(built).first?["n"].int ?? 0 > 0)
    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: "device-again", userID: nil)!).rows > 0)
    #expect(try await client.rows(built).first?["n"].int == 0)
    #expect(try await Self.items(store, filter, rollups: true) == Self.items(store, filter, rollups: false))
    try await store.close()
  }
}
