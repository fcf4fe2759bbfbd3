import CollectorReports
import CollectorStore
import Testing

/// Two devices whose ids, and two people whose ids, are equal Swift strings but not the same bytes
/// (`é` as one code point, and as `e` with a combining accent) are two devices and two people on
/// every engine: the databases keep them apart, and so must whatever the collector groups itself
/// (the write's check for stored ids, the funnel's walk, sessions, retention, people).
///
/// Range: two weeks from D0. Device `café` (one code point), user `zoë` (one code point): D0 10:00
/// app_open, 10:01 add_to_cart (session 1). Device `café` (combining accent), user `zoë`
/// (combining diaeresis): D0 10:00 app_open, 10:03 add_to_cart (session 1); D1 10:00 app_open
/// (session 2). Event ids are made of the device id, so they differ by their bytes too. With
/// `shared`, both devices are of the first user. Each device also views a `vé` (spelt as its own
/// id spells é) at 10:02 with a `size` of `é`, spelt the same way: two event names, two values.
/// The SQL engines answer again from their device sets and caches once built.
@Suite("Text told apart by its bytes on every engine")
struct ByteDistinctTextTests {
  static let composed = Fixture.Device(id: "caf\u{E9}", platform: "iOS", app: "1.0", os: "17")
  static let decomposed = Fixture.Device(id: "cafe\u{301}", platform: "iOS", app: "1.0", os: "17")

  /// An event of `device`: of user `zoë` as one code point on the device `café` as one, else of
  /// `zoë` with a combining diaeresis; with `shared`, both devices are of the first.
  static func event(_ device: Fixture.Device, _ name: String, _ time: Int64, session: Int64, shared: Bool)
    -> StoredEvent
  {
    var event = Fixture.event(device, name, time, session: session)
    if name.hasPrefix("v") {
      // `é` as the device's id spells it: its scalars after `caf`.
      event.parametersJSON = #"{"size":""# + String(device.id.unicodeScalars.dropFirst(3)) + #""}"#
    }
    event.userID = shared || device.id.hasSameBytes(as: composed.id) ? "zo\u{EB}" : "zoe\u{308}"
    return event
  }

  static func batch(shared: Bool) -> StoreBatch {
    StoreBatch(events: [
      event(composed, "app_open", Fixture.at(0, 10, 0), session: 1, shared: shared),
      event(composed, "add_to_cart", Fixture.at(0, 10, 1), session: 1, shared: shared),
      event(decomposed, "app_open", Fixture.at(0, 10, 0), session: 1, shared: shared),
      event(decomposed, "add_to_cart", Fixture.at(0, 10, 3), session: 1, shared: shared),
      event(decomposed, "app_open", Fixture.at(1, 10, 0), session: 2, shared: shared),
      event(composed, "v\u{E9}", Fixture.at(0, 10, 2), session: 1, shared: shared),
      event(decomposed, "ve\u{301}", Fixture.at(0, 10, 2), session: 1, shared: shared),
    ])
  }

  /// Two people, or with `shared` one person on two devices.
  @Test(arguments: Engine.available, [false, true])
  func devicesPeopleAndEventsStayTwo(engine: Engine, shared: Bool) async throws {
    #expect(Self.composed.id == Self.decomposed.id && !Self.composed.id.hasSameBytes(as: Self.decomposed.id))
    let (store, reports) = try await engine.openReports([Self.batch(shared: shared)])
    #expect(try await store.eventCount(app: "shop") == 7)
    try await Self.expectTwo(reports, shared: shared)
    if let keeper = store as? any DeviceSetKeeping {
      #expect(try await keeper.buildDeviceSets(before: .max) > 0)
      try await Self.expectTwo(reports, shared: shared)
    }
    try await store.close()
  }

  /// Two devices on app versions `1.é` spelt both ways, both active on D0, the second again on
  /// D1: retention by app version has a cohort per spelling, in byte order, on every engine.
  @Test(arguments: Engine.available)
  func retentionKeepsVersionsApart(engine: Engine) async throws {
    let versions = ["1.\u{E9}", "1.e\u{301}"]
    let devices = versions.enumerated().map { Fixture.Device(id: "d\($0)", platform: "iOS", app: $1, os: "17") }
    let events = [
      Fixture.event(devices[0], "app_open", Fixture.at(0, 10, 0), session: 1),
      Fixture.event(devices[1], "app_open", Fixture.at(0, 11, 0), session: 1),
      Fixture.event(devices[1], "app_open", Fixture.at(1, 10, 0), session: 2),
    ]
    let (store, reports) = try await engine.openReports([StoreBatch(events: events)])
    for unit in ReportUnit.allCases {
      var filter = Fixture.twoWeeks
      filter.unit = unit
      let retention = try await reports.retention(filter, period: .day, byAppVersion: true)
      let cohorts = retention.cohorts.map {
        [$0.appVersion ?? "-", "\($0.size)", "\($0.active.dropFirst().first ?? -1)"]
      }
      let expected = [["1.e\u{301}", "1", "1"], ["1.\u{E9}", "1", "0"]]
      #expect(
        cohorts.count == 2 && zip(cohorts, expected).allSatisfy { zip($0, $1).allSatisfy { $0.hasSameBytes(as: $1) } },
        "\(unit): \(cohorts)")
    }
    try await store.close()
  }

  static func expectTwo(_ reports: any ReportEngine, shared: Bool) async throws {
    let people: Int64 = shared ? 1 : 2
    let top = try await reports.topEvents(Fixture.twoWeeks)
    let byBytes = { (rows: [CountRow]) in
      rows.map { [$0.name, "\($0.count)", "\($0.devices)"] }.sorted { $0[0].utf8.lexicographicallyPrecedes($1[0].utf8) }
    }
    #expect(
      byBytes(top.rows) == [
        ["add_to_cart", "2", "2"], ["app_open", "3", "2"], ["ve\u{301}", "1", "1"], ["v\u{E9}", "1", "1"],
      ])
    for (name, value) in [("v\u{E9}", "\u{E9}"), ("ve\u{301}", "e\u{301}")] {
      let values = try await reports.parameterValues(Fixture.twoWeeks, event: name, parameter: "size")
      #expect(byBytes(values.rows) == [[value, "1", "1"]], "\(name)")
    }
    // Sessions: 60 s, 180 s and one of a single event; seven events in three.
    let sessions = try await reports.sessions(Fixture.twoWeeks)
    #expect(sessions == Sessions(count: 3, medianDuration: 120_000, eventsPerSession: 7.0 / 3))
    for unit in ReportUnit.allCases {
      var filter = Fixture.twoWeeks
      filter.unit = unit
      let overview = try await reports.overview(filter)
      #expect([overview.current.devices, overview.current.people] == [2, people], "\(unit)")
      let units = unit == .person ? people : 2
      let funnel = try await reports.funnel(filter, steps: ["app_open", "add_to_cart"], window: 3_600_000)
      #expect(funnel.steps.map(\.devices) == [units, units], "\(unit)")
      let paths = try await reports.funnelPaths(
        filter, steps: ["app_open", "add_to_cart"], window: 3_600_000, droppedAt: nil)
      #expect(paths.reached == [units, units], "\(unit)")
      for name in ["v\u{E9}", "ve\u{301}"] {
        let viewed = try await reports.funnel(filter, steps: ["app_open", name], window: 3_600_000)
        #expect(viewed.steps.map(\.devices) == [units, 1], "\(unit) \(name)")
      }
      // Both start on D0; only the device with a combining accent comes back on D1.
      let retention = try await reports.retention(filter, period: .day)
      #expect(retention.cohorts.first.map { Array($0.active.prefix(2)) } == [units, 1], "\(unit): \(retention)")
    }
  }
}
