import CollectorReports
import CollectorStore
import Testing

/// The median session length is the same on every engine, whether the store takes it (PostgreSQL's
/// `percentile_cont`) or the collector does from a row per session: the middle one, or with an even
/// number of sessions the integer part of the two middle ones' mean.
@Suite("Median session length on every engine")
struct SessionMedianTests {
  /// One session per entry of `lengths` (ms from its first event to its last, three events each) on
  /// a device of its own, on D3 from 10:00, a minute apart.
  static func batch(_ lengths: [Int64]) -> StoreBatch {
    StoreBatch(
      events: lengths.enumerated().flatMap { index, length in
        let device = Fixture.Device(id: "median-\(index)", platform: "iOS", app: "1.0", os: "17")
        let start = Fixture.at(3, 10, Int64(index))
        return [0, length / 2, length].map { offset in
          Fixture.event(device, "screen_view", start + offset, session: Int64(index + 1))
        }
      })
  }

  @Test(
    arguments: Engine.available,
    [
      ([1_000, 2_001], 1_500),  // even: (1,000 + 2,001) / 2, its integer part
      ([5_000, 2, 3_000, 9_000, 7_000], 5_000),  // odd: the middle one
      ([4_000, 4_000, 10_000, 1_000], 4_000),  // even, the two middle ones equal
    ] as [([Int64], Int64)])
  func medianOfEvenAndOddCounts(engine: Engine, sessions: ([Int64], Int64)) async throws {
    let (lengths, median) = sessions
    let (store, reports) = try await engine.openReports([Self.batch(lengths)])
    let found = try await reports.sessions(Fixture.twoWeeks)
    #expect(found == Sessions(count: Int64(lengths.count), medianDuration: median, eventsPerSession: 3))
    try await store.close()
  }
}
