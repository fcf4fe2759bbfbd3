import CollectorClickHouse
import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import Testing

/// Active users' new against returning count a unit seen before the range as returning however long
/// before (beyond the 30 days the spans read), on every engine as SQLite's events say, also after a
/// retention cut removes that history and after an erasure.
@Suite("Active users see the whole history, on every engine")
struct FirstSeenTests {
  static let day: Int64 = 86_400_000

  /// One event of `device` (of `user`, when named) `days` after the generated data's start, at 06:00.
  static func event(_ id: String, device: String, user: String? = nil, days: Int64) -> StoredEvent {
    let time = Generated.start + days * day + 6 * Generated.hour
    return StoredEvent(
      app: "shop", eventID: id, name: "app_open", kind: "action", occurredAt: time, utcOffsetMinutes: 0,
      receivedAt: time, deviceID: device, userID: user, sessionID: nil,
      context: EventContext([.appName: "Shop", .appVersion: "10.0", .osName: "iOS", .platform: "iOS"]),
      parametersJSON: "{}")
  }

  /// Devices active in the last week of the generated data: one first seen 60 days before it, one
  /// new, and a person whose other phone was seen 60 days before.
  static let history = StoreBatch(events: [
    event("old-1", device: "late-old", days: -60), event("old-2", device: "late-old", days: 15),
    event("new-1", device: "late-new", days: 16),
    event("person-1", device: "late-phone-old", user: "late-user", days: -60),
    event("person-2", device: "late-phone-new", user: "late-user", days: 17),
  ])

  /// The last week, on whole hours (the rollups answer) and in Kolkata (+05:30: the events answer).
  static let filters = [
    try! ReportFilter(app: "shop", from: Generated.start + 14 * day, to: Generated.start + 21 * day),
    try! ReportFilter(
      app: "shop", from: Generated.start + 14 * day + 5 * Generated.hour, to: Generated.start + 21 * day,
      zone: try! ReportZone(identifier: "Asia/Kolkata")),
  ]

  /// Active users of every filter, by person and by device.
  static func answers(_ reports: any ReportEngine) async throws -> [ActiveDevices] {
    var answers: [ActiveDevices] = []
    for filter in filters {
      for unit in [ReportUnit.person, .device] {
        var filter = filter
        filter.unit = unit
        answers.append(try await reports.activeDevices(filter))
      }
    }
    return answers
  }

  @Test(arguments: Engine.available)
  func newAndReturningAsTheEventsSayThroughPruningAndErasure(engine: Engine) async throws {
    let reference = try await Engine.sqlite.open(Generated.batches + [Self.history])
    let expected = { try await Self.answers(SQLReports(store: reference, rollups: false)) }
    let (store, reports) = try await engine.openReports(Generated.batches + [Self.history])
    let before = try await expected()
    #expect(try await Self.answers(reports) == before, "after ingest")

    // The history 60 days back is cut: the device seen then is new now, and so is the person.
    let cut = PruneCutoffs(defaultCutoff: Generated.start - 30 * Self.day, perApp: [:])
    #expect(try await reference.prune(cut) == 2)
    #expect(try await store.prune(cut) == 2)
    let pruned = try await expected()
    #expect(pruned.map(\.returning) != before.map(\.returning))
    #expect(try await Self.answers(reports) == pruned, "after pruning")

    // Seen again long before, then erased: nothing of it is kept, and the answers are the events'.
    let again = StoreBatch(events: [Self.event("old-3", device: "late-old", days: -40)])
    _ = try await reference.write(again)
    _ = try await store.write(again)
    #expect(try await Self.answers(reports) == (try await expected()), "seen again")
    let erased = ErasureSubject(app: "shop", deviceID: "late-old", userID: nil)!
    #expect(try await reference.erase(erased).rows == 2)
    #expect(try await store.erase(erased).rows == 2)
    #expect(try await Self.answers(reports) == (try await expected()), "after erasure")
    if let clickhouse = store as? ClickHouseEventStore {
      let client = try ClickHouseClient(url: clickhouse.url, database: clickhouse.database, http: ClickHouseClient.http)
      let kept = try await client.rows(
        "SELECT toInt64(count()) AS n FROM \(clickhouse.database).device_first WHERE device_id = 'late-old'")
      #expect(kept.first?["n"].int == 0)
    }
    try await store.close()
    try await reference.close()
  }
}
