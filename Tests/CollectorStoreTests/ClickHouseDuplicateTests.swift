import CollectorClickHouse
import CollectorStore
import Foundation
import TestSupport
import Testing

/// The check for copies a ClickHouse write makes before it answers reads, for the events it
/// inserted, only the parts made since it looked them up, and, for those it found stored, the whole
/// of their days.
@Suite("ClickHouse duplicates after a write")
struct ClickHouseDuplicateTests {
  static var engines: [Engine] { Engine.available.filter { $0 == .clickhouse || $0 == .clickhouseCluster } }

  private static let batch = (0..<40).map {
    Rows.event("d-\($0)", at: 1_700_000_000_000 + Int64($0) * 3_600_000, device: "device-\($0 % 7)")
  }

  /// Stores a second copy of every event of ``batch`` (what a racing writer leaves) and returns the
  /// rows of the events table, copies included.
  private static func copy(_ store: ClickHouseEventStore) async throws -> Int64 {
    let client = try ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
    let events = "\(store.database).events"
    try await client.execute(
      "INSERT INTO \(events) SELECT * FROM \(events) WHERE startsWith(event_id, 'd-')",
      settings: ["insert_distributed_sync": "1"])
    return try await rows(store)
  }

  private static func rows(_ store: ClickHouseEventStore) async throws -> Int64 {
    let client = try ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
    return try await client.rows("SELECT toInt64(count()) AS n FROM \(store.database).events").first?["n"].int ?? -1
  }

  @Test("copies of the events a write inserted are found in the parts made since its lookup", arguments: engines)
  func insertedEvents(engine: Engine) async throws {
    let store = try #require(try await engine.open() as? ClickHouseEventStore)
    let before = try await store.eventParts()
    _ = try await store.write(StoreBatch(events: Self.batch))
    #expect(try await Self.copy(store) == 80)
    try await store.removeDuplicates(of: Self.batch, partsBefore: before)
    #expect(try await Self.rows(store) == 40)
    try await store.close()
  }

  @Test("copies of events found stored are looked for in every part", arguments: engines)
  func foundEvents(engine: Engine) async throws {
    let store = try #require(try await engine.open() as? ClickHouseEventStore)
    _ = try await store.write(StoreBatch(events: Self.batch))
    let before = try await store.eventParts()
    #expect(try await Self.copy(store) == 80)
    // Taken as inserted by the write, the events' originals are in parts the check does not read:
    // only the newer parts are read for them.
    try await store.removeDuplicates(of: Self.batch, partsBefore: before)
    #expect(try await Self.rows(store) == 80)
    // Taken as found stored (a retry of a write that failed after inserting them), every part is.
    let found = Set(Self.batch.map { ExactText("\($0.app)\u{0}\($0.eventID)") })
    try await store.removeDuplicates(of: Self.batch, found: found, partsBefore: before)
    #expect(try await Self.rows(store) == 40)
    try await store.close()
  }
}
