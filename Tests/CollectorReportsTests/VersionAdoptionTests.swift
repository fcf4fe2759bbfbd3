import CollectorReports
import CollectorStore
import CollectorWire
import Testing

/// The worked example of `Docs/Extending.md`: a report declared once (``ReportQuery``), answered by
/// every engine, from the rollups (whole hours) and from the events (other ranges) alike.
@Suite("Version adoption")
struct VersionAdoptionTests {
  /// By hand: day 0 A (9.0) and B (10.0); day 1 B and C (10.0); day 2 D (9.0); day 7 A; day 8 C.
  @Test(arguments: Engine.available)
  func devicesPerAppVersionPerDay(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports()
    let minutes = try ReportFilter(app: "shop", from: Fixture.d0 + 60_000, to: Fixture.d0 + 14 * Fixture.day - 60_000)
    for filter in [Fixture.twoWeeks, minutes] {
      let adoption = try await reports.versionAdoption(filter)
      let expected: [(Int64, String, Int64, Double)] = [
        (0, "10.0", 1, 50), (0, "9.0", 1, 50), (1, "10.0", 2, 100), (2, "9.0", 1, 100), (7, "9.0", 1, 100),
        (8, "10.0", 1, 100),
      ]
      let found = adoption.points.map { ($0.day - Fixture.d0) / Fixture.day }
      #expect(found == expected.map(\.0), "\(adoption.points)")
      #expect(adoption.points.map(\.appVersion) == expected.map(\.1))
      #expect(adoption.points.map(\.devices) == expected.map(\.2))
      #expect(adoption.points.map(\.share) == expected.map(\.3))
    }
    let byName = try await reports.run("version-adoption") {
      ["app": "shop", "from": "2026-11-02", "to": "2026-11-04"][$0]
    }
    #expect((byName as? VersionAdoption)?.points.count == 3)
    #expect(byName.table.rows.first == ["2026-11-02T00:00:00Z", "10.0", "1", "50.0"])
    try await store.close()
  }

  @Test func aRangeOverFourHundredDaysIsRefusedNamingTheParameter() async throws {
    let (store, reports) = try await Engine.sqlite.openReports()
    let long = try ReportFilter(app: "shop", from: Fixture.d0, to: Fixture.d0 + 401 * Fixture.day)
    await #expect(throws: FieldError(field: "to", reason: "version adoption covers at most 400 days")) {
      try await reports.versionAdoption(long)
    }
    try await store.close()
  }
}
