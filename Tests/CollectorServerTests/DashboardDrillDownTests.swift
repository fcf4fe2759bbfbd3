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

  /// The count in a drill-down card's title (`...: N people`) and the profile links it lists.
  static func listed(_ html: String) throws -> (count: Int, profiles: [String]) {
    let title = try #require(html.range(of: #"(\d+) (people|devices)</h2>"#, options: .regularExpression))
    let count = try #require(Int(html[title].prefix { $0.isNumber }))
    let list = html[title.upperBound...]
    let profiles = list.components(separatedBy: #"<li><a href=""#).dropFirst().map {
      String($0.prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
    }
    return (count, profiles)
  }

  /// Shoppers who stop on the way, beside the seeded ones who do everything: one views today,
  /// one views and adds to the cart today, one views two days ago and is not seen again.
  static func seedDropOffs(_ collector: EventCollector) async throws {
    let day: Int64 = 86_400_000
    let today = Int64(Date().timeIntervalSince1970 * 1000) / day * day
    let visits: [(device: String, name: String, at: Int64)] = [
      ("shopper-1", "product_viewed", today + 60_000), ("shopper-2", "product_viewed", today + 60_000),
      ("shopper-2", "add_to_cart", today + 120_000), ("shopper-3", "product_viewed", today - 2 * day + 60_000),
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
    let collector = try await makeCollector()
    try await seedDashboard(collector)
    try await Self.seedDropOffs(collector)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let cookie = try #require(try await signIn(client, key: readKey).cookie)
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
        let (profile, _, _) = try await DashboardTests.get(client, profiles[0], cookie: cookie)
        #expect(profile == .ok)
      }
      let (bad, _, _) = try await DashboardTests.get(
        client, "/dashboard/funnel?app=ty&\(steps)&dropped=7", cookie: cookie)
      #expect(bad == .badRequest)
    }
    try await collector.store.close()
  }

  /// Every retention cell opens the people or devices it counts: as many as the cell's title says.
  @Test(arguments: ["person", "device"])
  func aRetentionCellOpensItsPeople(unit: String) async throws {
    let collector = try await makeCollector()
    try await seedDashboard(collector)
    try await Self.seedDropOffs(collector)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let cookie = try #require(try await signIn(client, key: readKey).cookie)
      let (_, page, _) = try await DashboardTests.get(
        client, "/dashboard/retention?app=ty&unit=\(unit)", cookie: cookie)
      let cells = Self.links(page, prefix: "/dashboard/retention?", marker: #"title=""#)
      #expect(cells.count >= 7, "a cell per cohort and period")
      #expect(cells.contains { $0.count > 0 } && cells.contains { $0.count == 0 })
      for (link, count) in cells {
        let (status, opened, _) = try await DashboardTests.get(client, link, cookie: cookie)
        let listed = try Self.listed(opened)
        #expect(status == .ok && listed.count == count && listed.profiles.count == count, "\(link)")
      }
      let (bad, _, _) = try await DashboardTests.get(
        client, "/dashboard/retention?app=ty&cohort=someday&offset=0", cookie: cookie)
      #expect(bad == .badRequest)
    }
    try await collector.store.close()
  }
}
