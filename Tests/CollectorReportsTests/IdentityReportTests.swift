import CollectorReports
import CollectorStore
import CollectorWire
import Testing

/// A small identity data set whose reports are computed by hand, in people and in devices.
///
/// Range: 17 days from Monday 2026-11-02 (D0). Seven devices, five people:
/// - u1's phone A (app 9.0): D0 10:00 view (anonymous), 10:05 signup as u1; D16 10:00 buy
///   (anonymous: a device's anonymous events count for its person).
/// - u1's tablet B (10.0): D0 11:00 buy as u1; D8 09:00 view, D16 12:00 view as u1.
/// - C (10.0), never signed in: D0 12:00 view; D8 10:00 view.
/// - D (9.0), shared: D1 09:00 view as u2, 09:30 buy as u1. The device stays u2's, its first user.
/// - u3's phone E (9.0): D1 10:00 view (anonymous), 10:10 signup as u3; D15 10:00 view as u3.
/// - F (10.0): the same phone after u3 signed out (a new anonymous id): D1 11:00 view; D9 10:00 view.
///   A person of its own.
/// - u3's tablet G (10.0): D8 12:00 view as u3. A new device of a returning person.
enum IdentityFixture {
  static let e = Fixture.Device(id: "E", platform: "iOS", app: "9.0", os: "17.4")
  static let f = Fixture.Device(id: "F", platform: "iOS", app: "10.0", os: "17.4")
  static let g = Fixture.Device(id: "G", platform: "iOS", app: "10.0", os: "17.4")

  static func event(
    _ device: Fixture.Device, _ name: String, _ day: Int64, _ hour: Int64, _ minute: Int64, _ user: String?
  )
    -> StoredEvent
  {
    var event = Fixture.event(device, name, Fixture.at(day, hour, minute), session: day * 100 + hour)
    event.userID = user
    return event
  }

  static let batch = StoreBatch(events: [
    event(Fixture.a, "view", 0, 10, 0, nil), event(Fixture.a, "signup", 0, 10, 5, "u1"),
    event(Fixture.a, "buy", 16, 10, 0, nil),
    event(Fixture.b, "buy", 0, 11, 0, "u1"), event(Fixture.b, "view", 8, 9, 0, "u1"),
    event(Fixture.b, "view", 16, 12, 0, "u1"),
    event(Fixture.c, "view", 0, 12, 0, nil), event(Fixture.c, "view", 8, 10, 0, nil),
    event(Fixture.d, "view", 1, 9, 0, "u2"), event(Fixture.d, "buy", 1, 9, 30, "u1"),
    event(e, "view", 1, 10, 0, nil), event(e, "signup", 1, 10, 10, "u3"), event(e, "view", 15, 10, 0, "u3"),
    event(f, "view", 1, 11, 0, nil), event(f, "view", 9, 10, 0, nil),
    event(g, "view", 8, 12, 0, "u3"),
  ])

  /// The range, on whole hours (the SQL engines read their rollups) or not (they read the events).
  static func ranges(from day: Int64 = 0, unit: ReportUnit) throws -> [ReportFilter] {
    let (from, to) = (Fixture.d0 + day * Fixture.day, Fixture.d0 + 17 * Fixture.day)
    return [
      try ReportFilter(app: "shop", from: from, to: to, unit: unit),
      try ReportFilter(app: "shop", from: from + 60_000, to: to - 60_000, unit: unit),
    ]
  }
}

@Suite("Reports in people and in devices, on hand-computed data")
struct IdentityReportTests {
  typealias Expected = (daily: Int64, weekly: Int64, monthly: Int64, new: Int64, returning: Int64)

  /// DAU (D16: A and B, both u1's), WAU (D10–D16: E, A, B), MAU (all); from D0 everyone is new; from
  /// D7, G is a new device but u3 was active before on E, so no person is new.
  @Test(arguments: Engine.available)
  func activeUsers(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([IdentityFixture.batch])
    let expected: [(ReportUnit, Int64, Expected)] = [
      (.person, 0, (1, 2, 5, 5, 0)), (.device, 0, (2, 3, 7, 7, 0)),
      (.person, 7, (1, 2, 5, 0, 4)), (.device, 7, (2, 3, 7, 1, 5)),
    ]
    for (unit, day, figures) in expected {
      for filter in try IdentityFixture.ranges(from: day, unit: unit) {
        let active = try await reports.activeDevices(filter)
        #expect(active.unit == unit)
        #expect(
          [active.daily, active.weekly, active.monthly, active.new, active.returning]
            == [figures.daily, figures.weekly, figures.monthly, figures.new, figures.returning],
          "\(unit) from D\(day): \(active)")
      }
    }
    try await store.close()
  }

  /// Weekly cohorts. People: u1 (A, B) and u3 (E, G) are active in all three weeks, C and F in the
  /// first two, u2 in the first. Devices: A, B, C, D, E, F start in week 0; G in week 1.
  @Test(arguments: Engine.available)
  func retention(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([IdentityFixture.batch])
    let expected: [(ReportUnit, Bool, [[Int64]], [String?])] = [
      (.person, false, [[5, 4, 2]], [nil]),
      (.device, false, [[6, 3, 3], [1, 0]], [nil, nil]),
      // By the version of the first event: u1 (A), u2 (D), u3 (E) on 9.0; C and F on 10.0.
      (.person, true, [[3, 2, 2], [2, 2, 0]], ["9.0", "10.0"]),
      (.device, true, [[3, 0, 2], [3, 3, 1], [1, 0]], ["9.0", "10.0", "10.0"]),
    ]
    for (unit, split, active, versions) in expected {
      for filter in try IdentityFixture.ranges(unit: unit) {
        let retention = try await reports.retention(filter, period: .week, byAppVersion: split)
        #expect(retention.unit == unit)
        #expect(retention.cohorts.map(\.active) == active, "\(unit), split \(split): \(retention.cohorts)")
        #expect(retention.cohorts.map(\.appVersion) == versions)
      }
    }
    try await store.close()
  }

  /// view → signup → buy within a day. Devices: seven viewed, A and E signed up, none bought after
  /// signing up on the same device. People: u1 viewed and signed up on A, then bought on B.
  @Test(arguments: Engine.available)
  func funnelFollowsAPersonAcrossDevices(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([IdentityFixture.batch])
    let expected: [(ReportUnit, [Int64])] = [(.person, [5, 2, 1]), (.device, [7, 2, 0])]
    for (unit, reached) in expected {
      for filter in try IdentityFixture.ranges(unit: unit) {
        let funnel = try await reports.funnel(filter, steps: ["view", "signup", "buy"], window: Fixture.day)
        #expect(funnel.unit == unit)
        #expect(funnel.steps.map(\.devices) == reached, "\(unit): \(funnel.steps)")
      }
    }
    try await store.close()
  }

  /// A device first seen with two people in one millisecond is the person of the smaller event id,
  /// on every engine (ClickHouse picks each device's person by time itself and asks the server only
  /// for such a tie). S views as u1 and as u2 in one millisecond; P, u1's phone, buys an hour later.
  /// S is u1's when u1's event id is the smaller: u1 views then buys (view → buy reaches 1, 1);
  /// otherwise S is u2's, who only views, and P alone never viewed (1, 0).
  @Test(arguments: Engine.available, [true, false])
  func aDeviceTiedBetweenTwoPeopleIsTheirsBySmallerEventID(engine: Engine, firstIsU1: Bool) async throws {
    let s = Fixture.Device(id: "S", platform: "iOS", app: "10.0", os: "17.4")
    var (first, second) = (
      IdentityFixture.event(s, "view", 0, 10, 0, "u1"), IdentityFixture.event(s, "view", 0, 10, 0, "u2")
    )
    if !firstIsU1 { swap(&first, &second) }
    (first.eventID, second.eventID) = ("S-1", "S-2")
    let buy = IdentityFixture.event(Fixture.a, "buy", 0, 11, 0, "u1")
    // The larger id written first: a store reading its rows as written meets it first.
    let batches = [StoreBatch(events: [second]), StoreBatch(events: [first, buy])]
    let (store, reports) = try await engine.openReports(batches)
    for filter in try IdentityFixture.ranges(unit: .person) {
      let funnel = try await reports.funnel(filter, steps: ["view", "buy"], window: Fixture.day)
      #expect(funnel.steps.map(\.devices) == (firstIsU1 ? [1, 1] : [1, 0]), "\(funnel.steps)")
    }
    try await store.close()
  }

  /// Reports ask for people by default; `unit=device` keeps the device answers; anything else is a
  /// 400 naming `unit`. The table names what it counts.
  @Test(arguments: Engine.available)
  func theReportAPIParameter(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([IdentityFixture.batch])
    func run(_ unit: String?) async throws -> ActiveDevices {
      let parameters = ["app": "shop", "from": "2026-11-02", "to": "2026-11-19", "unit": unit]
      let result = try await reports.run("active-devices") { parameters[$0] ?? nil }
      return try #require(result as? ActiveDevices)
    }
    #expect(try await run(nil).monthly == 5)
    #expect(try await run("person").table.columns == ["figure", "people"])
    #expect(try await run("device").monthly == 7)
    #expect(try await run("device").table.columns == ["figure", "devices"])
    await #expect(throws: FieldError(field: "unit", reason: "is person or device")) { try await run("user") }
    try await store.close()
  }
}
