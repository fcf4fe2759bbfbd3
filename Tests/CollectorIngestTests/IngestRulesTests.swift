import CollectorRuntime
import CollectorStore
import CollectorWire
import Testing

@testable import CollectorIngest

@Suite("Ingest rules")
struct IngestRulesTests {
  @Test(
    "ISO 8601 timestamps as SimpleAnalytics sends them",
    arguments: [
      ("2023-03-22T10:15:30-07:00", 1_679_505_330_000, -420),
      ("2023-03-22T17:15:30Z", 1_679_505_330_000, 0),
      ("2023-03-22T20:15:30.250+03:00", 1_679_505_330_250, 180),
      ("2023-03-22T20:15:30.2+0300", 1_679_505_330_200, 180),
      ("2024-02-29T00:00:00Z", 1_709_164_800_000, 0),
    ]
  )
  func validTimestamps(text: String, milliseconds: Int64, offset: Int) {
    #expect(ISO8601Timestamp.parse(text) == ISO8601Timestamp(milliseconds: milliseconds, offsetMinutes: offset))
  }

  @Test(
    "malformed timestamps are refused",
    arguments: [
      "", "yesterday", "2023-03-22", "2023-03-22T10:15:30", "2023-02-30T00:00:00Z", "2023-13-01T00:00:00Z",
      "2023-03-22T25:00:00Z", "2023-03-22T10:15:30+19:00", "2023-03-22T10:15:30.Z", "2023-03-22T10:15:30Zjunk",
      "1969-12-31T23:59:59Z", "２０２３-03-22T10:15:30Z",
    ]
  )
  func invalidTimestamps(text: String) {
    #expect(ISO8601Timestamp.parse(text) == nil)
  }

  @Test("the token bucket refuses past its burst and refills at its rate")
  func rateLimiter() {
    let limiter = RateLimiter(rate: 1000, burst: 3000)
    #expect(limiter.take(2500, key: "k", now: 0) == nil)
    #expect(limiter.take(500, key: "k", now: 0) == nil)
    #expect(limiter.take(100, key: "k", now: 0) == 1)
    #expect(limiter.take(100, key: "other", now: 0) == nil)
    #expect(limiter.take(100, key: "k", now: 0.1) == nil)
    #expect(limiter.take(3000, key: "k", now: 0.1) == 3)
    #expect(RateLimiter(rate: nil).take(1_000_000, key: "k", now: 0) == nil)
  }

  @Test("skew is corrected with sentAt, the future is clamped, old events are rejected")
  func nativeRows() throws {
    let received: Int64 = 1_800_000_000_000
    let context = EventContext([
      .appName: "A", .appVersion: "1", .appBuild: "1", .osName: "iOS", .osVersion: "17", .platform: "ios",
      .deviceModel: "m", .locale: "tr", .timeZone: "UTC", .libraryName: "CoreTracker", .libraryVersion: "1.0",
    ])
    func event(_ id: String, _ time: Int64) -> CollectorEvent {
      CollectorEvent(id: id, name: "n", kind: "action", timestamp: time, anonymousId: "d")
    }
    let batch = DecodedBatch(
      sentAt: received - 60_000, context: context,
      events: [
        event("a", received - 70_000), event("b", received + 10_000_000), event("c", received - 31 * 86_400_000),
      ],
      counters: [], rejected: []
    )
    let result = try NativeIngest.rows(of: batch, app: "ty", receivedAt: received, policy: IngestPolicy())
    #expect(result.rows.events.map(\.occurredAt) == [received - 10_000, received])
    #expect(result.rejected.map(\.field) == ["events[2].timestamp"])
    #expect(result.rows.events.first?.context == context)
  }

  @Test("content ids are stable, distinct, and shaped as UUIDs")
  func contentIDs() {
    let a = ContentID.make(["d", "app", "Opened", "2023-03-22T10:15:30Z", "{}"])
    #expect(a == ContentID.make(["d", "app", "Opened", "2023-03-22T10:15:30Z", "{}"]))
    #expect(a != ContentID.make(["d", "app", "Opened", "2023-03-22T10:15:31Z", "{}"]))
    #expect(a != ContentID.make(["da", "pp", "Opened", "2023-03-22T10:15:30Z", "{}"]))
    #expect(a.count == 36 && a.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
  }

  @Test("keys are hashed with SHA-256 and generated with their scope's prefix")
  func keys() {
    #expect(AccessKeys.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    let key = AccessKeys.generate(scope: .write)
    #expect(key.hasPrefix("ctw_") && key.count == 36)
    #expect(AccessKeys.generate(scope: .admin).hasPrefix("cta_"))
    #expect(AccessKeys.generate(scope: .write) != key)
  }
}
