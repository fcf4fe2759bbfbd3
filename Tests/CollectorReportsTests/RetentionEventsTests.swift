import CollectorReports
import CollectorStore
import CollectorWire
import Testing

/// Retention by a start event and a return event, on the hand-computed fixture, on every engine.
@Suite("Retention by start and return events")
struct RetentionEventsTests {
  /// Each case: the events, the period and days of the range from D0, and each cohort's active
  /// devices by period (the first is its size).
  static let cases: [(events: RetentionEvents, period: ReportBucket, days: Int64, active: [[Int64]])] = [
    // Any event: first seen, then active (the report as it always was).
    (.any, .day, 3, [[2, 1, 0], [1, 0], [1]]),
    // Added to the cart: A and B on D0; B viewed a product on D1, A did not.
    (RetentionEvents(start: "add_to_cart", back: "product_viewed"), .day, 3, [[2, 1, 0]]),
    // Everyone opened the app in week 0; no one bought in week 1 (A bought in week 0, which counts
    // for the cohort, not as coming back).
    (RetentionEvents(start: "app_open", back: "purchase"), .week, 14, [[4, 0]]),
    // Only A bought; it came back (any event) in week 1.
    (RetentionEvents(start: "purchase"), .week, 14, [[1, 1]]),
    // Viewed a product in week 0 (all four), opened the app in week 1: A (D7) and C (D8).
    (RetentionEvents(start: "product_viewed", back: "app_open"), .week, 14, [[4, 2]]),
    // No one did it: no cohort.
    (RetentionEvents(start: "never_sent"), .week, 14, []),
  ]

  @Test(arguments: Engine.available)
  func cohortsStartWithOneEventAndCountAnother(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    for item in Self.cases {
      var filter = Fixture.twoWeeks
      filter.unit = .device
      filter.to = Fixture.d0 + item.days * Fixture.day
      let retention = try await reports.retention(filter, period: item.period, byAppVersion: false, events: item.events)
      #expect(retention.cohorts.map(\.active) == item.active, "\(item.events)")
      #expect(retention.events == item.events)
    }
    // Split by the version of the first start event: A and D viewed on 9.0, B and C on 10.0.
    let split = try await reports.retention(
      Fixture.twoWeeks, period: .week, byAppVersion: true,
      events: RetentionEvents(start: "product_viewed", back: "app_open"))
    #expect(split.cohorts.map(\.appVersion) == ["9.0", "10.0"] && split.cohorts.map(\.active) == [[2, 1], [2, 1]])
    // A cell's devices come from the same events: B came back to view a product on D1.
    var days = Fixture.twoWeeks
    days.unit = .device
    days.to = Fixture.d0 + 3 * Fixture.day
    let cell = try await reports.retainedUnits(
      days, period: .day, events: RetentionEvents(start: "add_to_cart", back: "product_viewed"), cohort: Fixture.d0,
      offset: 1)
    #expect(cell == UnitList(unit: .device, count: 1, units: ["B"]))
    await #expect(throws: FieldError(field: "startEvent", reason: "must not contain U+0000")) {
      try await reports.retention(
        Fixture.twoWeeks, period: .week, byAppVersion: false, events: RetentionEvents(start: "a\u{0}b"))
    }
    try await store.close()
  }
}

/// Retention over more periods than one mask of the SQL stores' device rows holds (62): 80 days.
/// A (9.0) and B (10.0) are u1's devices; C was never signed in.
/// - A: days 0, 61, 62 and 79. B: days 62, 63 and 64. C (9.0): day 70.
@Suite("Retention over many periods")
struct LongRetentionTests {
  static let phone = Fixture.Device(id: "A", platform: "iOS", app: "9.0", os: "17.4")
  static let tablet = Fixture.Device(id: "B", platform: "iOS", app: "10.0", os: "17.4")
  static let other = Fixture.Device(id: "C", platform: "iOS", app: "9.0", os: "17.4")

  static let batch = StoreBatch(
    events: [(phone, [0, 61, 62, 79]), (tablet, [62, 63, 64]), (other, [70])].flatMap { device, days in
      days.map { day in
        var event = Fixture.event(device, "app_open", Fixture.at(Int64(day), 10, 0), session: Int64(day))
        event.userID = device.id == "C" ? nil : "u1"
        return event
      }
    })

  /// Cohort `start`'s active units, as many periods as are left in the 80 days, 1 at `days`.
  static func active(from start: Int, at days: [Int]) -> [Int64] {
    (start..<80).map { days.contains($0) ? 1 : 0 }
  }

  @Test(arguments: Engine.available)
  func countsEveryPeriodInUnitsAndVersions(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([Self.batch])
    var filter = try ReportFilter(app: "shop", from: Fixture.d0, to: Fixture.d0 + 80 * Fixture.day, unit: .device)
    for events in [RetentionEvents.any, RetentionEvents(start: "app_open", back: "app_open")] {
      let devices = try await reports.retention(filter, period: .day, byAppVersion: true, events: events)
      #expect(devices.cohorts.map(\.appVersion) == ["9.0", "10.0", "9.0"], "\(events)")
      #expect(
        devices.cohorts.map(\.active) == [
          Self.active(from: 0, at: [0, 61, 62, 79]), Self.active(from: 62, at: [62, 63, 64]),
          Self.active(from: 70, at: [70]),
        ], "\(events)")
    }
    filter.unit = .person
    let people = try await reports.retention(filter, period: .day, byAppVersion: true, events: .any)
    #expect(people.cohorts.map(\.appVersion) == ["9.0", "9.0"])
    #expect(
      people.cohorts.map(\.active) == [
        Self.active(from: 0, at: [0, 61, 62, 63, 64, 79]), Self.active(from: 70, at: [70]),
      ])
    for (offset, units) in [(0, ["u:u1"]), (63, ["u:u1"]), (65, [])] {
      let cell = try await reports.retainedUnits(filter, period: .day, cohort: Fixture.d0, offset: offset)
      #expect(cell == UnitList(unit: .person, count: Int64(units.count), units: units), "\(offset)")
    }
    let late = try await reports.retainedUnits(filter, period: .day, cohort: Fixture.d0 + 70 * Fixture.day, offset: 0)
    #expect(late == UnitList(unit: .person, count: 1, units: ["d:C"]))
    try await store.close()
  }
}
