import CollectorReports
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// A funnel step's drop-off and a retention cell open the people or devices behind them (over
/// HTTP, on a seeded SQLite store), each linking to their page.
@Suite("Dashboard drill-down into people")
struct DashboardDrillDownTests {
  /// The `(link, count)` pairs of `html` whose links start with `prefix` and whose count follows
  /// `marker` after the link.
  static func links(_ html: String, prefix: String, marker: String) -> [(link: String, count: Int)] {
    html.components(separatedBy: #"href=""# + prefix).dropFirst().compactMap { part in
      guard let end = part.firstIndex(of: "\""), let mark = part.range(of: marker) else { return nil }
      guard let count = Int(part[mark.upperBound...].prefix { $0.isNumber }) else { return nil }
      return (prefix + String(part[..<end]).replacingOccurrences(of: "&amp;", with: "&"), count)
    }
  }

  /// The lines of the CSV the drill-down card of `html` links to, header included.
  static func exported(_ client: some TestClientProtocol, _ html: String, cookie: String) async throws -> Int {
    let start = try #require(
      html.range(of: #"<a class="csv" href="/v1/reports/(funnel-dropped|retained)\?"#, options: .regularExpression))
    let link = String(html[html.index(start.lowerBound, offsetBy: 22)...].prefix { $0 != "\"" })
    let (status, csv, _) = try await DashboardTests.get(
      client, link.replacingOccurrences(of: "&amp;", with: "&"), cookie: cookie)
    #expect(status == .ok, "\(link)")
    return csv.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count
  }

  /// The count in a drill-down card's title (`...: N people`) and the profile links it lists.
  static func listed(_ html: String) throws -> (count: Int, profiles: [String]) {
    let title = try #require(
      html.range(of: #"(\d+) (people|devices)( <a class="csv"[^>]*>CSV</a>)?</h2>"#, options: .regularExpression))
    let count = try #require(Int(html[title].prefix { $0.isNumber }))
    let list = html[title.upperBound...]
    let profiles = list.components(separatedBy: #"<li><a href=""#).dropFirst().map {
      String($0.prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
    }
    return (count, profiles)
  }

  /// Shoppers who stop on the way, beside the seeded ones who do everything: one views today,
  /// one views and adds to the cart today, one views two days ago and is not seen again; one viewed
  /// ten days ago (the range before the default one).
  static func seedDropOffs(_ collector: EventCollector) async throws {
    let day: Int64 = 86_400_000
    let today = Int64(Date().timeIntervalSince1970 * 1000) / day * day
    let visits: [(device: String, name: String, at: Int64)] = [
      ("shopper-1", "product_viewed", today + 60_000), ("shopper-2", "product_viewed", today + 60_000),
      ("shopper-2", "add_to_cart", today + 120_000), ("shopper-3", "product_viewed", today - 2 * day + 60_000),
      ("shopper-4", "product_viewed", today - 10 * day + 60_000),
    ]
    let events = visits.enumerated().map { index, visit in
      StoredEvent(
        app: "ty", eventID: "drop-\(index)", name: visit.name, kind: "action", occurredAt: visit.at,
        utcOffsetMinutes: 0, receivedAt: visit.at, deviceID: visit.device, userID: nil, sessionID: 9,
        context: EventContext([.appVersion: "9.0", .osName: "iOS", .osVersion: "17.4", .platform: "iOS"]),
        parametersJSON: "{}")
    }
    _ = try await collector.store.write(StoreBatch(events: events))
  }

  /// Each step with drop-offs opens who reached the step before it and not it: as many as the
  /// funnel lost there, each opening their page; a step reached shows its median time.
  @Test(arguments: ["person", "device"])
  func aFunnelStepOpensWhoDroppedThere(unit: String) async throws {
    try await onSeededDashboard(seed: DashboardDrillDownTests.seedDropOffs) { client, cookie in
      let steps = ["product_viewed", "add_to_cart", "purchase"].map { "step=\($0)" }.joined(separator: "&")
      let (_, page, _) = try await DashboardTests.get(
        client, "/dashboard/funnel?app=ty&unit=\(unit)&\(steps)&window=7d", cookie: cookie)
      let bars = page.components(separatedBy: #"<span class="note">"#).dropFirst().compactMap {
        Int($0.prefix { $0.isNumber })
      }
      #expect(bars.count == 3 && bars[0] > bars[2] && page.contains("from step 1"))
      let drops = DashboardSearchTests.drills(page)
      #expect(!drops.isEmpty)
      for (link, _) in drops {
        let step = try #require(Int(link.components(separatedBy: "dropped=").last ?? ""))
        let (status, opened, _) = try await DashboardTests.get(client, link, cookie: cookie)
        let (count, profiles) = try Self.listed(opened)
        #expect(status == .ok && count == bars[step - 1] - bars[step] && count > 0, "\(link)")
        #expect(profiles.count == count && profiles.allSatisfy { $0.hasPrefix("/dashboard/profile?") })
        #expect(try await Self.exported(client, opened, cookie: cookie) == count + 1, "the CSV lists them")
        let (profile, _, _) = try await DashboardTests.get(client, profiles[0], cookie: cookie)
        #expect(profile == .ok)
      }
      let (bad, _, _) = try await DashboardTests.get(
        client, "/dashboard/funnel?app=ty&\(steps)&dropped=7", cookie: cookie)
      #expect(bad == .badRequest)
    }
  }

  /// The overview's events figure opens the search that counts them, its counters and quarantined
  /// figures their pages; its chart (and the revenue page's) draws the range before under the range,
  /// point for point.
  @Test func theOverviewsFiguresOpenWhatTheyCountAndItsChartShowsTheRangeBefore() async throws {
    try await onSeededDashboard(seed: DashboardDrillDownTests.seedDropOffs) { client, cookie in
      let (_, page, _) = try await DashboardTests.get(client, "/?app=ty", cookie: cookie)
      let figures = Self.links(page, prefix: "/dashboard/search?", marker: #"<span class="value">"#)
      let events = try #require(figures.first)
      let (_, search, _) = try await DashboardTests.get(client, events.link, cookie: cookie)
      #expect(DashboardSearchTests.matched(search) == events.count && events.count > 0)
      for target in ["/dashboard/counters?", "/dashboard/quarantine?"] {
        let link = try #require(Self.links(page, prefix: target, marker: #"<span class="value">"#).first)
        let (status, _, _) = try await DashboardTests.get(client, link.link, cookie: cookie)
        #expect(status == .ok, "\(link.link)")
      }
      let points = { (marker: String) -> [Substring] in
        let start = page.range(of: marker).map { page[$0.upperBound...].prefix { $0 != "\"" } } ?? ""
        return start.split(separator: " ")
      }
      let now = points(#"<polyline class="series" points=""#)
      let before = points(#"<polyline class="series previous" points=""#)
      #expect(now.count == 7 && before.count == 7, "a point per day of each range")
      #expect(Set(before.map { $0.split(separator: ",")[1] }).count == 2, "one day of the range before had an event")
      #expect(page.contains("the range before</p>"))
      let (_, revenue, _) = try await DashboardTests.get(client, "/dashboard/revenue?app=ty", cookie: cookie)
      #expect(revenue.contains(#"<polyline class="series previous""#) && revenue.contains("the range before</p>"))
    }
  }

  /// Every retention cell opens the people or devices it counts: as many as the cell's title says;
  /// with a start and a return event picked too, and then the cohorts are the API's.
  @Test(arguments: ["person", "device"], ["", "&startEvent=add_to_cart&returnEvent=purchase"])
  func aRetentionCellOpensItsPeople(unit: String, events: String) async throws {
    try await onSeededDashboard(seed: DashboardDrillDownTests.seedDropOffs) { client, cookie in
      let (_, page, _) = try await DashboardTests.get(
        client, "/dashboard/retention?app=ty&unit=\(unit)\(events)", cookie: cookie)
      let cells = Self.links(page, prefix: "/dashboard/retention?", marker: #"title=""#)
      #expect(cells.count >= 7, "a cell per cohort and period")
      #expect(cells.contains { $0.count > 0 } && (!events.isEmpty || cells.contains { $0.count == 0 }))
      if !events.isEmpty {
        #expect(
          page.contains(#"<option value="add_to_cart" selected>"#)
            && page.contains(#"<option value="purchase" selected>"#))
        #expect(cells.allSatisfy { $0.link.contains("startEvent=add_to_cart&returnEvent=purchase") })
        let (from, _, apiTo) = DashboardTests.lastSevenDays
        let (_, json, _) = try await ReportRouteTests.get(
          client, "/v1/reports/retention?app=ty&from=\(from)&to=\(apiTo)&period=day&unit=\(unit)\(events)")
        let api = try JSONDecoder().decode(Retention.self, from: Data(json.utf8))
        #expect(api.cohorts.flatMap(\.active).map(Int.init) == cells.map(\.count), "the page's cells are the API's")
      }
      for (link, count) in cells {
        let (status, opened, _) = try await DashboardTests.get(client, link, cookie: cookie)
        let listed = try Self.listed(opened)
        #expect(status == .ok && listed.count == count && listed.profiles.count == count, "\(link)")
        #expect(try await Self.exported(client, opened, cookie: cookie) == count + 1, "the CSV lists them")
      }
      let (bad, _, _) = try await DashboardTests.get(
        client, "/dashboard/retention?app=ty&cohort=someday&offset=0", cookie: cookie)
      #expect(bad == .badRequest)
    }
  }
}

extension DashboardBrowserTests {
  /// With the keyboard alone, in a real browser: Tab reaches a retention cell past the navigation
  /// and the filters, with its focus drawn, and Enter opens its people; one of them opens their page;
  /// Tab reaches a funnel step's drop-off and Enter lists who dropped there.
  @Test(.enabled(if: chromium != nil)) func theKeyboardOpensWhoIsBehindACellAndAStep() async throws {
    let collector = try await makeCollector(configure: { $0.idleTimeoutSeconds = 600 })
    try await seedDashboard(collector)
    try await DashboardDrillDownTests.seedDropOffs(collector)
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let base = "http://127.0.0.1:\(try #require(client.port))"
      let steps: [[String: Any]] = [
        ["open": "/dashboard/retention?app=ty"], ["tabTo": "td.cell a"], ["follow": "ul.units a"],
        ["open": "/dashboard/funnel?app=ty&step=product_viewed&step=add_to_cart&step=purchase&window=7d"],
        ["tabTo": "a.row.drill"],
      ]
      let result = try await Self.session(base: base, key: readKey, steps: steps)
      #expect(result["error"] == nil, "\(result["error"] ?? "")")
      let pages = try #require(result["steps"] as? [[String: Any]])
      try #require(pages.count == steps.count)
      let cell = pages[1]
      let trail = cell["focus"] as? [String] ?? []
      #expect(cell["reached"] as? Bool == true && cell["outline"] as? String != "none", "\(trail)")
      #expect(trail.contains { $0.hasPrefix("a /dashboard/funnel") } && trail.contains { $0.hasPrefix("select") })
      #expect(
        (cell["url"] as? String)?.contains("cohort=") == true
          && (cell["html"] as? String)?.contains("Cohort of") == true)
      #expect((pages[2]["url"] as? String)?.contains("/dashboard/profile?") == true)
      let step = pages[4]
      #expect(step["reached"] as? Bool == true && (step["url"] as? String)?.contains("dropped=") == true)
      #expect((step["html"] as? String)?.contains("Reached product_viewed, not add_to_cart") == true)
      #expect(pages.allSatisfy { ($0["console"] as? [String])?.isEmpty == true })
    }
    try await collector.store.close()
  }
}
