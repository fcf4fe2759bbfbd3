import CollectorReports
import CollectorServer
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Each app's report time zone through the HTTP API, `GET /v1/apps` and the dashboard, and the
/// settings that configure it.
@Suite("Report time zones over HTTP")
struct TimeZoneRouteTests {
  static let istanbul = try! ReportZone(identifier: "Europe/Istanbul")

  @Test func theAppsZoneBucketsItsDaysAndTzOverridesIt() async throws {
    let collector = try await makeCollector(configure: { $0.zones = ["ty": Self.istanbul] })
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    // Half past midnight two days ago in Istanbul: the evening before in UTC.
    let day = Self.istanbul.day(of: now) - 2
    let midnight = Self.istanbul.start(ofDay: day)
    let date = String(ReportTime.iso(day * 86_400_000).prefix(10))
    let next = String(ReportTime.iso((day + 1) * 86_400_000).prefix(10))
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (stored, _, _) = try await RouterTests.post(
        client, "/v1/batch", Batches.body([Batches.event("late", device: "d1", at: midnight + 30 * 60_000)]))
      #expect(stored == .ok)
      let range = "app=ty&from=\(date)&to=\(next)"
      let (status, json, _) = try await ReportRouteTests.get(client, "/v1/reports/timeseries?\(range)")
      #expect(status == .ok, "\(json)")
      let local = try JSONDecoder().decode(TimeSeries.self, from: Data(json.utf8))
      #expect(local.points.map(\.start) == [midnight] && local.points.map(\.count) == [1])
      // The same day in UTC starts three hours later: the event is not in it.
      let (_, utcJSON, _) = try await ReportRouteTests.get(client, "/v1/reports/timeseries?\(range)&tz=UTC")
      let utc = try JSONDecoder().decode(TimeSeries.self, from: Data(utcJSON.utf8))
      #expect(utc.points.map(\.start) == [day * 86_400_000] && utc.points.map(\.count) == [0])
      let (bad, why, _) = try await ReportRouteTests.get(client, "/v1/reports/overview?\(range)&tz=Mars/Olympus")
      #expect(bad == .badRequest && why.contains(#""field":"tz""#) && why.contains("Mars/Olympus"), "\(why)")
      let (_, apps, _) = try await ReportRouteTests.get(client, "/v1/apps")
      #expect(apps == #"{"apps":["ty"],"timeZones":{"ty":"Europe/Istanbul"},"environments":{"ty":["production"]}}"#)
      // The dashboard reads the same days, names the zone and labels days by its calendar.
      let basic = "Basic " + Data("anyone:\(adminKey)".utf8).base64EncodedString()
      let page = try await client.execute(
        uri: "/?app=ty&from=\(date)&to=\(date)", method: .get, headers: [.authorization: basic]
      ) { String(buffer: $0.body) }
      #expect(page.contains(#"name="tz" size="16" value="Europe/Istanbul""#))
      #expect(page.contains("&tz=Europe%2FIstanbul"))
      // The hourly chart of that day starts at its local midnight (in UTC it would start at 21:00).
      let before = String(ReportTime.iso((day - 1) * 86_400_000).prefix(10))
      #expect(page.contains("\(date)T00") && !page.contains("\(before)T21"))
    }
    try await collector.store.close()
  }

  @Test func zonesAreConfiguredPerAppWithADefault() throws {
    let configuration = try CollectorConfiguration.resolve(
      arguments: ["time-zone": "America/New_York", "time-zones": "ty=Europe/Istanbul"], environment: [:])
    #expect(configuration.zone(of: "ty").identifier == "Europe/Istanbul")
    #expect(configuration.zone(of: "dl").identifier == "America/New_York")
    #expect(try CollectorConfiguration.resolve(arguments: [:], environment: [:]).zone(of: "ty") == .utc)
    #expect {
      try CollectorConfiguration.resolve(arguments: ["time-zones": "ty=Istanbul"], environment: [:])
    } throws: { error in
      "\(error)".contains("time zone of ty") && "\(error)".contains("\"Istanbul\" is not an IANA time zone")
    }
  }
}
