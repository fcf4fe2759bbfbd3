import CollectorClickHouse
import CollectorReports
import CollectorStore
import TestSupport
import Testing

/// Funnels that name a step more than once (`view → cart → view → cart → buy`), on every engine.
/// One event never counts as two steps, and the answers must equal the walk's
/// (``Funnel/reached(_:steps:window:)``), on ClickHouse too (whose collector walks packed events).
@Suite("Funnels with a step named twice")
struct FunnelRepeatTests {
  /// One event of `device` at minute `minute` of D3 10:00.
  static func event(_ device: String, _ name: String, _ minute: Int64) -> StoredEvent {
    Fixture.event(
      Fixture.Device(id: device, platform: "iOS", app: "1.0", os: "17"), name, Fixture.at(3, 10, minute), session: 1)
  }

  /// - A: view, cart, view, cart, buy a minute apart.
  /// - B: view, cart, buy. C: view, view, cart, buy. D: cart, view, cart, view.
  /// - E: view, cart, view, cart, then the buy 90 minutes after the first view (out of the window).
  static let batch = StoreBatch(
    events: [
      ("A", ["view", "cart", "view", "cart", "buy"]), ("B", ["view", "cart", "buy"]),
      ("C", ["view", "view", "cart", "buy"]), ("D", ["cart", "view", "cart", "view"]),
    ].flatMap { device, names in names.enumerated().map { event(device, $1, Int64($0)) } }
      + ["view", "cart", "view", "cart"].enumerated().map { event("E", $1, Int64($0)) } + [event("E", "buy", 90)])

  @Test(
    arguments: Engine.available,
    [
      // Neighbours differ: A reaches 5, B 2, C 2, D 3, E 4.
      (["view", "cart", "view", "cart", "buy"], [5, 5, 3, 2, 1]),
      // A step named twice in a row: a single view is not two steps, so B
      // stops at 1; A, C, D and E view twice; only A and C buy within the hour of a view.
      (["view", "view", "buy"], [5, 4, 2]),
    ] as [([String], [Int64])])
  func aStepNamedAgain(engine: Engine, funnel: ([String], [Int64])) async throws {
    let (steps, expected) = funnel
    let (store, reports) = try await engine.openReports([Self.batch])
    var filter = Fixture.twoWeeks
    filter.unit = .device
    let found = try await reports.funnel(filter, steps: steps, window: 3_600_000)
    #expect(found.steps.map(\.devices) == expected)
    let events = try await reports.funnelEvents(filter, steps: steps, limit: nil)
    #expect(Funnel.reached(events, steps: steps, window: 3_600_000) == expected)
    if let limited = Self.withSmallLimits(reports) {
      #expect(try await limited.funnel(filter, steps: steps, window: 3_600_000).steps.map(\.devices) == expected)
    }
    try await store.close()
  }

  /// `reports`, on ClickHouse, walking the units tied in one millisecond `tiedListed` to a query
  /// and spilling the grouping of step events to the server's disk past a byte, as a large store
  /// does; `nil` on the SQL engines.
  static func withSmallLimits(_ reports: any ReportEngine, tiedListed: Int = 1) -> (any ReportEngine)? {
    guard var clickHouse = reports as? ClickHouseReports else { return nil }
    clickHouse.funnelLimits.spillBytes = 1
    clickHouse.funnelLimits.tiedListed = tiedListed
    return clickHouse
  }

  /// Random paths over three names and random funnels whose neighbouring steps differ: every
  /// engine's answer equals the walk's over the same events (a seeded generator, so a failure
  /// repeats). Minutes are distinct per device: ties in one millisecond are `FunnelTieTests`'.
  @Test(arguments: Engine.available)
  func randomFunnelsEqualTheWalk(engine: Engine) async throws {
    var random = SeededRandom(seed: 0x5EED_F00D)
    let names = ["a", "b", "c"]
    var events: [StoredEvent] = []
    for device in 0..<40 {
      var minute: Int64 = 0
      for _ in 0..<Int.random(in: 0..<14, using: &random) {
        minute += 1 + Int64(Int.random(in: 0..<6, using: &random))
        events.append(Self.event("r\(device)", names[Int.random(in: 0..<3, using: &random)], minute))
      }
    }
    let (store, reports) = try await engine.openReports([StoreBatch(events: events)])
    var filter = Fixture.twoWeeks
    filter.unit = .device
    let walked = events.sorted { ($0.deviceID, $0.occurredAt) < ($1.deviceID, $1.occurredAt) }
      .map { (unit: $0.deviceID, name: $0.name, time: $0.occurredAt) }
    for _ in 0..<8 {
      var steps = [names[Int.random(in: 0..<3, using: &random)]]
      let length = 3 + Int.random(in: 0..<4, using: &random)
      while steps.count < length {
        let next = names[Int.random(in: 0..<3, using: &random)]
        if next != steps.last { steps.append(next) }
      }
      let window = Int64(5 + Int.random(in: 0..<20, using: &random)) * 60_000
      let expected = Funnel.reached(walked, steps: steps, window: window)
      let found = try await reports.funnel(filter, steps: steps, window: window)
      #expect(found.steps.map(\.devices) == expected, "\(steps) \(window)")
      if let limited = Self.withSmallLimits(reports) {
        #expect(try await limited.funnel(filter, steps: steps, window: window).steps.map(\.devices) == expected)
      }
    }
    try await store.close()
  }
}
