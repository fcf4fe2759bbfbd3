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
