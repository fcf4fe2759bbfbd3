import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import Testing

/// Reports in the app's time zone on every engine: days of 23 and 25 hours across DST changes
/// (America/New_York, 2026-03-08 and 2026-11-01), a zone without DST ahead of UTC
/// (Europe/Istanbul, +03:00), and UTC as before.
@Suite("Reports in a time zone")
struct TimeZoneReportTests {
  static func time(_ text: String) -> Int64 { ReportTime.parse(text)! }

  static func event(
    _ device: String, _ name: String, _ at: String, parameters: String = "{}", version: String = "1.0"
  ) -> StoredEvent {
    let time = time(at)
    return StoredEvent(
      app: "shop", eventID: "\(device)-\(name)-\(time)", name: name, kind: "action", occurredAt: time,
      utcOffsetMinutes: 0, receivedAt: time, deviceID: device, userID: nil, sessionID: time / 1_000,
      context: EventContext([.platform: "iOS", .appVersion: version]), parametersJSON: parameters)
  }

  /// Around New York's fall-back (01:00–02:00 happens twice on 2026-11-01) and spring-forward, and
  /// one event late on 2026-11-01 in UTC that is already 2026-11-02 in Istanbul.
  static let batch = StoreBatch(events: [
    event("x", "app_open", "2026-11-01T03:59:00Z"),  // NY: Oct 31, 23:59 EDT
    event("x", "app_open", "2026-11-01T04:30:00Z"),  // NY: Nov 1, 00:30 EDT
    event("x", "app_open", "2026-11-01T05:30:00Z"),  // NY: Nov 1, 01:30 EDT
    event("x", "app_open", "2026-11-01T06:30:00Z"),  // NY: Nov 1, 01:30 EST (the repeated hour)
    event(
      "x", "purchase", "2026-11-02T04:30:00Z",  // NY: Nov 1, 23:30 EST; UTC: Nov 2
      parameters: #"{"transaction_id":"T1","value":10,"currency":"USD"}"#),
    event("y", "app_open", "2026-11-01T04:45:00Z", version: "2.0"),  // NY: Nov 1
    event("y", "app_open", "2026-11-02T05:30:00Z", version: "2.0"),  // NY: Nov 2, 00:30 EST
    event("z", "app_open", "2026-03-08T06:30:00Z"),  // NY: Mar 8, 01:30 EST
    event("z", "app_open", "2026-03-08T07:30:00Z"),  // NY: Mar 8, 03:30 EDT (02:xx never happens)
    event("w", "app_open", "2026-11-01T22:30:00Z"),  // Istanbul: Nov 2, 01:30
  ])

  static func parameters(_ extra: [String: String]) -> ReportParameters {
    let all = ["app": "shop"].merging(extra) { $1 }
    return ReportParameters { all[$0] }
  }

  static func series(_ reports: any ReportEngine, _ extra: [String: String]) async throws -> [(String, Int64)] {
    let result = try await reports.run(.timeseries, parameters: parameters(extra)) as! TimeSeries
    return result.points.map { (ReportTime.iso($0.start), $0.count) }
  }

  @Test(arguments: Engine.available)
  func daysAndHoursFollowTheZoneAcrossDSTChanges(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([Self.batch])
    // New York's 2026-11-01 is 25 hours long; the event at 04:30 UTC on Nov 2 is still Nov 1 there.
    let york = ["from": "2026-10-31", "to": "2026-11-03", "tz": "America/New_York"]
    let days = try await Self.series(reports, york)
    #expect(days.map(\.0) == ["2026-10-31T04:00:00Z", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"])
    #expect(days.map(\.1) == [1, 6, 1])
    // Its hours: 25 buckets, the repeated 01:00 twice.
    let hours = try await Self.series(
      reports, ["from": "2026-11-01", "to": "2026-11-02", "tz": "America/New_York", "bucket": "hour"])
    #expect(hours.count == 25)
    #expect(
      hours.filter { $0.1 > 0 }.map(\.0) == [
        "2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T22:00:00Z",
        "2026-11-02T04:00:00Z",
      ])
    // Its 2026-03-08 is 23 hours long: one day, 23 hours.
    let spring = ["from": "2026-03-08", "to": "2026-03-09", "tz": "America/New_York"]
    #expect(try await Self.series(reports, spring).map(\.0) == ["2026-03-08T05:00:00Z"])
    #expect(try await Self.series(reports, spring).map(\.1) == [2])
    #expect(try await Self.series(reports, spring.merging(["bucket": "hour"]) { $1 }).count == 23)
    // Istanbul (+03:00): the event at 22:30 UTC on Nov 1 is on Nov 2; UTC keeps it on Nov 1.
    let istanbul = try await Self.series(reports, ["from": "2026-11-02", "to": "2026-11-03", "tz": "Europe/Istanbul"])
    #expect(istanbul.map(\.0) == ["2026-11-01T21:00:00Z"] && istanbul.map(\.1) == [3])
    let utc = try await Self.series(reports, ["from": "2026-11-01", "to": "2026-11-02"])
    #expect(utc.map(\.0) == ["2026-11-01T00:00:00Z"] && utc.map(\.1) == [6])
    try await store.close()
  }

  /// Retention, active users, revenue per day and version adoption count the zone's days too.
  @Test(arguments: Engine.available)
  func retentionActiveUsersRevenueAndAdoptionUseTheZonesDays(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([Self.batch])
    let york = ["from": "2026-11-01", "to": "2026-11-03", "tz": "America/New_York", "unit": "device"]
    // x's and w's events are all on New York's Nov 1 (25 hours); y comes back on Nov 2.
    let retention =
      try await reports.run(.retention, parameters: Self.parameters(york.merging(["period": "day"]) { $1 }))
      as! Retention
    #expect(retention.cohorts.map { ReportTime.iso($0.start) } == ["2026-11-01T04:00:00Z"])
    #expect(retention.cohorts.first?.active == [3, 1])
    // DAU at the end of Nov 1 (New York): the whole 25-hour day, y's event in its first hour included.
    let active =
      try await reports.run(
        .activeDevices, parameters: Self.parameters(york.merging(["to": "2026-11-02"]) { $1 })) as! ActiveDevices
    #expect(active.daily == 3)
    // The purchase at 04:30 UTC on Nov 2 is revenue of New York's Nov 1.
    let revenue = try await reports.run(.revenue, parameters: Self.parameters(york)) as! Revenue
    #expect(revenue.days.map { ReportTime.iso($0.start) } == ["2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"])
    #expect(revenue.days.map(\.net) == [10, 0])
    let adoption = try await reports.run(.versionAdoption, parameters: Self.parameters(york)) as! VersionAdoption
    #expect(
      adoption.points.map { "\(ReportTime.iso($0.day)) \($0.appVersion) \($0.devices)" } == [
        "2026-11-01T04:00:00Z 2.0 1", "2026-11-01T04:00:00Z 1.0 2", "2026-11-02T05:00:00Z 2.0 1",
      ])
    try await store.close()
  }

  @Test func aZoneIsAnIANANameAndADayIsItsMidnight() throws {
    for name in ["EST", "GMT+3", "Mars/Olympus", "+03:00"] {
      #expect(throws: FieldError(field: "tz", reason: #""\#(name)" is not an IANA time zone (Europe/Istanbul, UTC)"#)) {
        try Report.filter { ["app": "shop", "tz": name][$0] }
      }
    }
    let filter = try Report.filter {
      ["app": "shop", "from": "2026-11-01", "to": "2026-11-02", "tz": "Europe/Istanbul"][$0]
    }
    #expect(
      ReportTime.iso(filter.from) == "2026-10-31T21:00:00Z" && ReportTime.iso(filter.to) == "2026-11-01T21:00:00Z")
    // A time with its offset is that instant, whatever the zone.
    let exact = try Report.filter {
      ["app": "shop", "from": "2026-11-01T00:00:00Z", "to": "2026-11-02T00:00:00Z", "tz": "Europe/Istanbul"][$0]
    }
    #expect(ReportTime.iso(exact.from) == "2026-11-01T00:00:00Z")
    #expect(filter.zone.iso(filter.from) == "2026-11-01T00:00:00+03:00")
    #expect(ReportZone.utc.iso(0) == "1970-01-01T00:00:00Z")
    let york = try ReportZone(identifier: "America/New_York")
    #expect(york.iso(Self.time("2026-11-01T06:30:00Z")) == "2026-11-01T01:30:00-05:00")
    #expect(york.iso(Self.time("2026-11-01T05:30:00Z")) == "2026-11-01T01:30:00-04:00")
  }
}
