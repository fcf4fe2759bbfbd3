import AsyncHTTPClient
import CollectorClickHouse
import CollectorStore
import Foundation
import TestSupport
import Testing

/// Migration 9 sorts an older store's events by name: every event kept once, the rollups still fed,
/// and a run after a failure part-way completes.
@Suite("ClickHouse events by name")
struct ClickHouseEventsByNameTests {
  static let day: Int64 = 86_400_000
  static let start: Int64 = 1_790_000_000_000

  /// Events of three names over two days, a purchase among them with parameters.
  static func events(_ ids: Range<Int>) -> [StoredEvent] {
    ids.map { index in
      var event = ClickHouseStoreEdgeTests.event(
        "e-\(index)", at: start + Int64(index) * day / 7, device: "device-\(index % 3)")
      event.name = ["search", "purchase", "product_viewed"][index % 3]
      if event.name == "purchase" { event.parametersJSON = #"{"product_id":"p\#(index % 2)"}"# }
      return event
    }
  }

  /// The sort key of the store's events table, from its engine clause.
  static func sortKey(_ client: ClickHouseClient, _ database: String) async throws -> String {
    let engine = try await client.rows(
      "SELECT engine_full AS e FROM system.tables WHERE database = '\(database)' AND name = 'events'"
    ).first?["e"].text
    guard let engine, let order = engine.range(of: "ORDER BY ") else { return "" }
    return String(engine[order.upperBound...].prefix { $0 != ")" }) + ")"
  }

  @Test(.enabled(if: ClickHouseTestServer.url != nil), arguments: [false, true])
  func anOlderStoreKeepsEveryEventAndItsRollups(interruptedBefore: Bool) async throws {
    let database = ClickHouseTestServer.uniqueDatabase()
    let store = try ClickHouseEventStore(url: ClickHouseTestServer.url!, database: database)
    let client = try ClickHouseClient(
      url: URL(string: ClickHouseTestServer.url!)!, database: database, http: ClickHouseClient.http)
    try await store.migrate(through: 8)
    #expect(try await Self.sortKey(client, database) == "(app, day, event_id)")
    var batch = StoreBatch()
    batch.events = Self.events(0..<12)
    #expect(try await store.write(batch).insertedEvents == 12)
    let before = try await store.events(app: "ty", limit: 100)
    if interruptedBefore {
      // A run that failed part-way left an incomplete copy behind.
      try await client.execute("CREATE TABLE \(database).events_by_name AS \(database).events")
      try await client.execute("INSERT INTO \(database).events_by_name SELECT * FROM \(database).events LIMIT 5")
    }

    try await store.migrate()
    #expect(try await Self.sortKey(client, database) == "(app, day, name, event_id)")
    #expect(try await store.schemaVersion() == store.knownSchemaVersion)
    #expect(try await store.events(app: "ty", limit: 100) == before)
    let left = try await client.rows(
      "SELECT name FROM system.tables WHERE database = '\(database)' AND name LIKE 'events_%'")
    #expect(left.isEmpty)

    // The views feed the rollups from the new table; a resent event is found and not stored again.
    batch.events = Self.events(10..<20)
    let again = try await store.write(batch)
    #expect(again.insertedEvents == 8 && again.duplicateEvents == 2)
    #expect(try await store.eventCount(app: "ty") == 20)
    let rolled = try await client.rows(
      "SELECT toInt64(sum(events)) AS n FROM \(database).activity_names WHERE app = 'ty'")
    #expect(rolled.first?["n"].int == 20)
    #expect(try await store.reconcileRollups() == 0)
    try await store.migrate()
    #expect(try await store.eventCount(app: "ty") == 20)
  }
}
