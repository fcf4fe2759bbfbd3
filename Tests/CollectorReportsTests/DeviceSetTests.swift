import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import Testing

/// Device sets (a cache of the names rollup) answer as the events do, whatever part of the range is
/// built, through late and resent events, erasure, pruning and a rebuild; and reports read them.
@Suite("Device sets answer exactly as the events do")
struct DeviceSetTests {
  static let day: Int64 = 86_400_000

  /// The SQL engines whose stores keep device sets.
  static var engines: [Engine] {
    Engine.sql
  }

  /// Events in hours already built: a device seen before, and one never seen (`round` days later,
  /// under ids of their own).
  static func late(_ round: Int = 0) -> StoreBatch {
    let time = Generated.start + Int64(3 + round) * day + 5 * Generated.hour
    let events = ["device-3", "device-late"].enumerated().flatMap { index, device in
      ["product_viewed", "purchase"].enumerated().map { offset, name in
        StoredEvent(
          app: "shop", eventID: "late-\(round)-\(index)-\(offset)", name: name, kind: "action",
          occurredAt: time + Int64(index * 60_000 + offset), utcOffsetMinutes: 0, receivedAt: time,
          deviceID: device, userID: nil, sessionID: 99_000 + Int64(index),
          context: EventContext([
            .appName: "Shop", .appVersion: "10.0", .osName: "iOS", .osVersion: "18.1", .platform: "iOS",
            .libraryName: "CoreTracker/1.0.0",
          ]),
          parametersJSON: #"{"product_id":"p3"}"#)
      }
    }
    return StoreBatch(events: events)
  }

  @Test(arguments: engines)
  func setsMatchTheEventsThroughLateEventsErasurePruningAndRebuild(engine: Engine) async throws {
    let store = try await engine.open(Generated.batches)
    let keeper = try #require(store as? any DeviceSetKeeping)
    // The first ten days built: reports read sets there and the rollup's rows after.
    #expect(try await keeper.buildDeviceSets(before: Generated.start + 10 * Self.day) > 200)
    try await RollupEquivalenceTests.expectSame(store, "ten days of sets")

    _ = try await store.write(Self.late())
    _ = try await store.write(Generated.batches[0])
    try await RollupEquivalenceTests.expectSame(store, "after late and resent events")

    #expect(try await keeper.buildDeviceSets(before: .max) > 0)
    #expect(try await keeper.buildDeviceSets(before: .max) == 0)
    try await RollupEquivalenceTests.expectSame(store, "every hour built")

    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: "device-7", userID: nil)!).rows > 0)
    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: nil, userID: "user-2")!).rows > 0)
    try await RollupEquivalenceTests.expectSame(store, "after erasure")
    let numbers = try #require(store.deviceSets).numbers
    let erased = try await store.read(
      "SELECT count(*) AS n FROM \(numbers) WHERE app = 'shop' AND device_id = 'device-7'", [])
    #expect(erased.first?["n"].int == 0)
    try await keeper.buildDeviceSets(before: .max)
    try await RollupEquivalenceTests.expectSame(store, "after erasure, built again")

    let pruned = try await store.prune(
      PruneCutoffs(defaultCutoff: Generated.start + 2 * Self.day + 90 * 60_000, perApp: [:]))
    #expect(pruned > 0)
    try await RollupEquivalenceTests.expectSame(store, "after pruning")

    #expect(try await store.rebuildRollups() > 0)
    try await RollupEquivalenceTests.expectSame(store, "after a rebuild, nothing built")
    try await keeper.buildDeviceSets(before: .max)
    try await RollupEquivalenceTests.expectSame(store, "after a rebuild, built again")
    try await store.close()
  }

  /// A build running beside writes into the hours it builds leaves no set the writes made stale
  /// (PostgreSQL: the build's lock on the names rollup; SQLite: one writer).
  @Test(arguments: engines)
  func buildsBesideLateWritesLeaveNoStaleSet(engine: Engine) async throws {
    let store = try await engine.open(Generated.batches)
    let keeper = try #require(store as? any DeviceSetKeeping)
    for round in 0..<4 {
      async let built = keeper.buildDeviceSets(before: .max)
      _ = try await store.write(Self.late(round))
      _ = try await built
    }
    try await RollupEquivalenceTests.expectSame(store, "builds beside late writes")
    try await store.close()
  }

  /// Reports read the sets where hours are built: the totals per hour and name without a platform
  /// or version, the sets per dimensions with one (damaged on purpose, each shows in its reports).
  @Test(arguments: engines, [false, true])
  func reportsReadTheSetsOfBuiltHoursOnly(engine: Engine, byPlatform: Bool) async throws {
    let store = try await engine.open(Generated.batches)
    let keeper = try #require(store as? any DeviceSetKeeping)
    let tables = try #require(store.deviceSets)
    let (damaged, spared) = byPlatform ? (tables.sets, tables.totals) : (tables.totals, tables.sets)
    let filter = Generated.filters[byPlatform ? 4 : 0]  // iOS 18.1, as the late events
    let honest = try await SQLReports(store: store).topEvents(filter, limit: 100)
    // A report of the sessions rollup (all events per day) reads the sets of every name.
    let series = try await SQLReports(store: store).timeSeries(filter, bucket: .day)
    try await keeper.buildDeviceSets(before: .max)
    #expect(try await SQLReports(store: store).topEvents(filter, limit: 100) == honest)
    #expect(try await SQLReports(store: store).timeSeries(filter, bucket: .day) == series)
    // Damage one table on purpose: reports from the rollups must show it, from the events not.
    try await store.execute("UPDATE \(spared) SET events = events + 1")
    #expect(try await SQLReports(store: store).topEvents(filter, limit: 100) == honest)
    try await store.execute("UPDATE \(damaged) SET events = events + 1")
    #expect(try await SQLReports(store: store).topEvents(filter, limit: 100) != honest)
    #expect(try await SQLReports(store: store).timeSeries(filter, bucket: .day) != series)
    #expect(try await SQLReports(store: store, rollups: false).topEvents(filter, limit: 100) == honest)
    #expect(try await SQLReports(store: store, rollups: false).timeSeries(filter, bucket: .day) == series)
    // A late event in a damaged hour deletes that hour's sets: the rollup's rows answer there.
    try await store.execute("UPDATE \(damaged) SET events = events - 1")
    let lateHour = Generated.start + 3 * Self.day + 5 * Generated.hour
    try await store.execute("UPDATE \(damaged) SET events = events + 1000 WHERE hour = \(lateHour)")
    _ = try await store.write(Self.late())
    let fixed = try await SQLReports(store: store).topEvents(filter, limit: 100)
    #expect(fixed == (try await SQLReports(store: store, rollups: false).topEvents(filter, limit: 100)))
    #expect(fixed != honest)
    try await store.close()
  }

  @Test(arguments: [[UInt32](), [7], [3, 1, 2, 3, 1], [UInt32.max, 0, 65_536, 65_535]])
  func aSetsBytesHoldItsNumbersOnceInOrder(numbers: [UInt32]) {
    let bytes = DeviceSetCoding.encode(numbers)
    var decoded: [UInt32] = []
    bytes.withUnsafeBytes { DeviceSetCoding.decode($0, into: &decoded) }
    #expect(decoded == Array(Set(numbers)).sorted())
    #expect(bytes.count == 4 * Set(numbers).count)
  }

  /// The hours a build takes per transaction: every unmarked hour from the first to the last (or to
  /// `before`) once, in runs of at most ``DeviceSetSQL/hoursPerBuild`` that stop at a marked hour.
  static let stretches: [(hours: Range<Int64>, marked: Set<Int64>, before: Int64)] = [
    (0..<30, [], .max), (0..<30, [3, 4, 17], .max), (5..<6, [], .max), (0..<30, [], 20 * 3_600_000 + 1),
    (0..<12, Set(0..<12), .max),
  ]

  @Test(arguments: stretches)
  func hoursAreBuiltInRunsOfAFewHours(stretch: (hours: Range<Int64>, marked: Set<Int64>, before: Int64)) {
    let (hours, marked, before) = stretch
    let hour = RollupTables.hour
    let runs = DeviceSetSQL.unbuilt(
      first: hours.lowerBound * hour, last: (hours.upperBound - 1) * hour, before: before,
      marked: Set(marked.map { $0 * hour }))
    let built = runs.flatMap { stride(from: $0.lowerBound, to: $0.upperBound, by: Int(hour)).map { $0 / hour } }
    let expected = hours.filter { !marked.contains($0) && ($0 + 1) * hour <= before }
    #expect(built == expected)
    #expect(runs.allSatisfy { !$0.isEmpty && $0.count <= DeviceSetSQL.hoursPerBuild * hour })
    // As few runs as that allows: each stretch of unmarked hours in runs of `hoursPerBuild`.
    let stretches = expected.enumerated().reduce(into: [Int64]()) { lengths, hour in
      if hour.offset > 0, expected[hour.offset - 1] == hour.element - 1 {
        lengths[lengths.count - 1] += 1
      } else {
        lengths.append(1)
      }
    }
    let per = DeviceSetSQL.hoursPerBuild
    #expect(Int64(runs.count) == stretches.reduce(0) { $0 + ($1 + per - 1) / per })
  }
}
