import CollectorReports
import CollectorStore
import CollectorWire
import Testing

/// The people or devices behind a funnel step's drop-off and a retention cell, and the time to each
/// funnel step, on the hand-computed data sets, on every engine.
@Suite("Drill-downs on hand-computed data")
struct DrillDownTests {
  /// product_viewed → add_to_cart → purchase within an hour: A does all three (5 and 15 minutes
  /// after its view), B the first two (29 minutes), C and D only view. No one is identified, so
  /// people are devices, named by their ids.
  @Test(arguments: Engine.available, [ReportUnit.device, .person])
  func aFunnelsTimesAndDropOffs(engine: Engine, unit: ReportUnit) async throws {
    let (store, reports) = try await engine.openReports()
    var filter = Fixture.twoWeeks
    filter.unit = unit
    let steps = ["product_viewed", "add_to_cart", "purchase"]
    let name = { (device: String) in device }
    let first = try await reports.funnelPaths(filter, steps: steps, window: 3_600_000, droppedAt: 1)
    #expect(first.reached == [4, 2, 1])
    #expect(first.medianTimes == [0, 300_000, 900_000])
    #expect(first.dropped == UnitList(unit: unit, count: 2, units: [name("C"), name("D")]))
    let funnel = try await reports.funnel(filter, steps: steps, window: 3_600_000)
    #expect(funnel.steps.map(\.devices) == first.reached)
    let second = try await reports.funnelPaths(filter, steps: steps, window: 3_600_000, droppedAt: 2, limit: 5)
    #expect(second.dropped == UnitList(unit: unit, count: 1, units: [name("B")]))
    let listedOne = try await reports.funnelPaths(filter, steps: steps, window: 3_600_000, droppedAt: 1, limit: 1)
    #expect(listedOne.dropped == UnitList(unit: unit, count: 2, units: [name("C")]))
    // The step events (8: five views, two adds, a purchase); past a limit an engine says there are
    // more, by one row more or by refusing.
    #expect(try await reports.funnelEvents(filter, steps: steps, limit: 100).count == 8)
    do {
      #expect(try await reports.funnelEvents(filter, steps: steps, limit: 2).count == 3)
    } catch let error as FieldError {
      #expect(error == FunnelPaths.tooManyEvents)
    }
    // No step asked: no list; a step that is not one gets an error naming the parameter.
    #expect(try await reports.funnelPaths(filter, steps: steps, window: 3_600_000, droppedAt: nil).dropped == nil)
    for wrong in [0, 3] {
      await #expect(throws: FieldError(field: "dropped", reason: "a step from 2 to 3")) {
        try await reports.funnelPaths(filter, steps: steps, window: 3_600_000, droppedAt: wrong)
      }
    }
    try await store.close()
  }

  /// view → buy within a day, in people: u1 viewed on phone A and bought on tablet B an hour later;
  /// u2 bought on D 30 minutes after viewing; C, F and u3 only viewed.
  @Test(arguments: Engine.available)
  func aPersonsStepsOnAllTheirDevicesFormOnePath(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([IdentityFixture.batch])
    let filter = try IdentityFixture.ranges(unit: .person)[0]
    let paths = try await reports.funnelPaths(filter, steps: ["view", "buy"], window: 86_400_000, droppedAt: 1)
    #expect(paths.reached == [5, 2])
    #expect(paths.medianTimes == [0, 1_800_000])
    #expect(paths.dropped == UnitList(unit: .person, count: 3, units: ["d:C", "d:F", "u:u3"]))
    try await store.close()
  }

  /// Weekly: the cohort of D0 is all four devices, A (D7) and C (D8) active a week later. Daily
  /// over three days: A and B on D0, B again on D1; C first on D1. No one is identified: people are
  /// devices.
  @Test(arguments: Engine.available, [ReportUnit.device, .person])
  func aRetentionCellsPeopleOrDevices(engine: Engine, unit: ReportUnit) async throws {
    let (store, reports) = try await engine.openReports()
    var weeks = Fixture.twoWeeks
    weeks.unit = unit
    let name = { (device: String) in device }
    let cases: [(period: ReportBucket, days: Int64, cohort: Int64, offset: Int, limit: Int, expected: UnitList)] = [
      (.week, 14, 0, 0, 100, UnitList(unit: unit, count: 4, units: ["A", "B", "C", "D"].map(name))),
      (.week, 14, 0, 1, 100, UnitList(unit: unit, count: 2, units: ["A", "C"].map(name))),
      (.week, 14, 0, 1, 1, UnitList(unit: unit, count: 2, units: [name("A")])),
      (.day, 3, 0, 1, 100, UnitList(unit: unit, count: 1, units: [name("B")])),
      (.day, 3, 1, 0, 100, UnitList(unit: unit, count: 1, units: [name("C")])),
      (.day, 3, 1, 1, 100, UnitList(unit: unit, count: 0, units: [])),
    ]
    for item in cases {
      var filter = weeks
      filter.to = Fixture.d0 + item.days * Fixture.day
      let units = try await reports.retainedUnits(
        filter, period: item.period, cohort: Fixture.d0 + item.cohort * Fixture.day, offset: item.offset,
        limit: item.limit)
      #expect(units == item.expected, "\(item.period) cohort \(item.cohort) offset \(item.offset)")
    }
    await #expect(throws: FieldError.self) {
      try await reports.retainedUnits(weeks, period: .week, cohort: Fixture.d0 + Fixture.day, offset: 0)
    }
    try await store.close()
  }
}
