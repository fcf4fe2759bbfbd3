import CollectorRuntime
import CollectorSQLite
import CollectorStore
import CollectorWire
import Foundation
import Logging
import TestSupport
import Testing

/// The collector's device-set job builds the hours that have settled, and only those.
@Suite("Device set job")
struct DeviceSetJobTests {
  static let hour: Int64 = 3_600_000

  static func event(_ id: String, at time: Int64) -> StoredEvent {
    StoredEvent(
      app: "shop", eventID: id, name: "screen_view", kind: "screen", occurredAt: time, utcOffsetMinutes: 0,
      receivedAt: time, deviceID: "device-\(id)", userID: nil, sessionID: 1,
      context: EventContext([
        .appName: "Shop", .appVersion: "1.0", .osName: "iOS", .osVersion: "18.1", .platform: "iOS",
      ]),
      parametersJSON: "{}")
  }

  @Test(arguments: [2 * hour, 30 * 60_000] as [Int64])
  func theJobBuildsTheHoursThatHaveSettled(settled: Int64) async throws {
    let path = TestFiles.unique("sets", suffix: ".sqlite").path
    let store = try SQLiteEventStore(path: path)
    try await store.migrate()
    let now: Int64 = 1_800_000_000_000 / Self.hour * Self.hour
    let times = [now - 10 * Self.hour, now - 3 * Self.hour + 5, now - Self.hour + 7]
    _ = try await store.write(StoreBatch(events: times.enumerated().map { Self.event("e\($0)", at: $1) }))
    let job = DeviceSetJob(store: store, settled: .milliseconds(settled), logger: Logger(label: "test"))
    // From the first hour with events to the last that ended `settled` ago.
    let expected = Int((now - settled) / Self.hour * Self.hour - (now - 10 * Self.hour)) / Int(Self.hour)
    #expect(try await job.runOnce(now: now) == expected)
    #expect(try await job.runOnce(now: now) == 0)
    let marks = try await store.read("SELECT max(hour) AS last FROM \(store.deviceSets!.hours)", [])
    #expect(marks.first?["last"].int == (now - settled) / Self.hour * Self.hour - Self.hour)
    try await store.close()
  }
}
