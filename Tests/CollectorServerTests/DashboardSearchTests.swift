import CollectorReports
import CollectorServer
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// The search page, the drill-downs into it, and saved views (over HTTP, on a seeded SQLite store).
@Suite("Dashboard search and saved views")
struct DashboardSearchTests {
  /// Every drill-down link of a page's bars with the count its bar shows.
  static func drills(_ html: String) -> [(link: String, count: Int)] {
    html.components(separatedBy: #"<a class="row drill" role="listitem" href=""#).dropFirst().compactMap { part in
      guard let end = part.firstIndex(of: "\""), let note = part.range(of: #"<span class="note">"#) else { return nil }
      guard let count = Int(part[note.upperBound...].prefix { $0.isNumber }) else { return nil }
      return (String(part[..<end]).replacingOccurrences(of: "&amp;", with: "&"), count)
    }
  }

  /// The count the search page states.
  static func matched(_ html: String) -> Int? {
    guard let range = html.range(of: #"<p class="count"><strong>"#) else { return nil }
    return Int(html[range.upperBound...].prefix { $0.isNumber })
  }

  static func csrf(_ html: String) throws -> String {
    let start = try #require(html.range(of: #"name="csrf" value=""#))
    return String(html[start.upperBound...].prefix { $0 != "\"" })
  }

  static func post(_ client: some TestClientProtocol, _ uri: String, _ form: [(String, String)], cookie: String)
    async throws -> (HTTPResponse.Status, String, String)
  {
    let body = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }
      .joined(separator: "&")
    let headers: HTTPFields = [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"]
    return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body)) {
      ($0.status, $0.headers[.location] ?? "", String(buffer: $0.body))
    }
  }

  /// A bar of top events, a platform or a version opens the search page, which counts and lists
  /// exactly the events the bar counted.
  @Test(arguments: ["/dashboard/events?app=ty", "/dashboard/breakdowns?app=ty&platform=iOS", "/?app=ty"])
  func aBarOpensExactlyTheEventsItCounts(page: String) async throws {
    try await onSeededDashboard { client, cookie in
      let (_, html, _) = try await DashboardTests.get(client, page, cookie: cookie)
      let drills = Self.drills(html)
      #expect(drills.count >= 3, "\(page)")
      for (link, count) in drills {
        #expect(link.hasPrefix("/dashboard/search?"))
        let (status, found, _) = try await DashboardTests.get(client, link, cookie: cookie)
        #expect(status == .ok && Self.matched(found) == count, "\(link)")
        let rows = found.components(separatedBy: "<tr><td>").count - 1
        #expect(rows == min(count, 50), "\(link): every event counted is listed (a page of 50)")
      }
    }
  }

  /// The search page counts what the API's `events` report lists, for every dimension it offers.
  @Test(arguments: [
    "event=product_viewed", "device=device-3", "user=u1", "parameters=product_id%3Dp1", "osName=iOS&event=purchase",
    "event=purchase&parameters=transaction_id%3DT1",
  ])
  func theSearchCountsWhatTheAPIReturns(search: String) async throws {
    let collector = try await makeCollector()
    try await seedDashboard(collector)
    let (from, to, apiTo) = DashboardTests.lastSevenDays
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let cookie = try #require(try await signIn(client, key: readKey).cookie)
      let (_, html, _) = try await DashboardTests.get(
        client, "/dashboard/search?app=ty&from=\(from)&to=\(to)&\(search)", cookie: cookie)
      let api = "app=ty&from=\(from)&to=\(apiTo)&limit=1000&\(search)"
      let (_, json, _) = try await ReportRouteTests.get(client, "/v1/reports/events?\(api)")
      let rows = try JSONDecoder().decode(EventRows.self, from: Data(json.utf8))
      #expect(rows.next == nil && !rows.rows.isEmpty, "\(json.prefix(300))")
      #expect(Self.matched(html) == rows.rows.count, "\(search)")
    }
    try await collector.store.close()
  }

  /// A reader saves a search; it is listed for the app, opens from its link with its filters, is
  /// renamed by its creator, can be changed by an admin and by no other reader, never keeps a key,
  /// and outlives a restart.
  @Test func aSavedSearchIsSharedByLinkAndOutlivesARestart() async throws {
    let path = TestFiles.unique("saved", suffix: ".sqlite").path
    let first = try await makeCollector(path: path)
    try await seedDashboard(first)
    let link = try await first.application(closesStore: false).test(.router) { client async throws -> String in
      let reader = try #require(try await signIn(client, key: readKey).cookie)
      let query = "app=ty&event=purchase&platform=iOS"
      let (_, page, _) = try await DashboardTests.get(client, "/dashboard/search?\(query)", cookie: reader)
      #expect(
        page.contains(#"action="/views/save""#) && page.contains(#"name="query" value="app=ty&amp;event=purchase"#))
      let csrf = try Self.csrf(page)
      let form = [
        ("csrf", csrf), ("app", "ty"), ("name", "iOS purchases"), ("path", "/dashboard/search"), ("query", query),
      ]
      let (saved, location, _) = try await Self.post(client, "/views/save", form, cookie: reader)
      #expect(saved == .seeOther && location == "/dashboard/saved?app=ty")
      let (_, list, _) = try await DashboardTests.get(client, location, cookie: reader)
      let start = try #require(list.range(of: #"<a href="/dashboard/view/"#))
      let link = "/dashboard/view/" + list[start.upperBound...].prefix { $0 != "\"" }
      #expect(list.contains(">iOS purchases</a>") && list.contains(">Rename</button>"))
      let (opened, target, _) = try await client.execute(uri: link, method: .get, headers: [.cookie: reader]) {
        ($0.status, $0.headers[.location] ?? "", String(buffer: $0.body))
      }
      #expect(opened == .seeOther && target == "/dashboard/search?\(query)&view=\(link.suffix(16))")
      let (_, shown, _) = try await DashboardTests.get(client, target, cookie: reader)
      #expect(shown.contains(#"value="iOS purchases""#) && shown.contains("as a new view"))
      let id = String(link.suffix(16))
      let (refused, _, _) = try await Self.post(
        client, "/views/save", [("csrf", "wrong"), ("id", id), ("name", "x")], cookie: reader)
      #expect(refused == .forbidden)
      let (keyed, _, body) = try await Self.post(
        client, "/views/save", form.map { $0.0 == "query" ? ($0.0, "app=ty&key=\(adminKey)") : $0 }, cookie: reader)
      #expect(keyed == .badRequest && body.contains("must not hold a key") && !body.contains(adminKey))
      let (encoded, _, _) = try await Self.post(
        client, "/views/save", form.map { $0.0 == "query" ? ($0.0, "app=ty&K%65y=x") : $0 }, cookie: reader)
      #expect(encoded == .badRequest, "an escaped name is still a key")
      let (renamed, _, _) = try await Self.post(
        client, "/views/save", [("csrf", csrf), ("id", id), ("name", "Purchases on iOS")], cookie: reader)
      #expect(renamed == .seeOther)
      // An admin's view: readers open it, only an admin changes it.
      let admin = try #require(try await signIn(client, key: adminKey).cookie)
      let (_, adminPage, _) = try await DashboardTests.get(client, "/dashboard/retention?app=ty", cookie: admin)
      let adminForm = [
        ("csrf", try Self.csrf(adminPage)), ("app", "ty"), ("name", "Weekly retention"),
        ("path", "/dashboard/retention"),
        ("query", "app=ty"),
      ]
      #expect(try await Self.post(client, "/views/save", adminForm, cookie: admin).0 == .seeOther)
      let (_, both, _) = try await DashboardTests.get(client, "/dashboard/saved?app=ty", cookie: reader)
      let adminID = try #require(
        both.components(separatedBy: #"<a href="/dashboard/view/"#).dropFirst().map {
          String($0.prefix(16))
        }.first { $0 != id })
      #expect(both.components(separatedBy: ">Rename</button>").count == 2, "the reader may rename only their own")
      let (forbidden, _, _) = try await Self.post(
        client, "/views/delete", [("csrf", csrf), ("id", adminID)], cookie: reader)
      #expect(forbidden == .forbidden)
      let (deleted, _, _) = try await Self.post(
        client, "/views/delete", [("csrf", try Self.csrf(adminPage)), ("id", adminID)], cookie: admin)
      #expect(deleted == .seeOther)
      return link
    }
    try await first.store.close()
    let second = try await makeCollector(path: path)
    try await second.application(closesStore: false).test(.router) { client async throws in
      let reader = try #require(try await signIn(client, key: readKey).cookie)
      let (_, list, _) = try await DashboardTests.get(client, "/dashboard/saved?app=ty", cookie: reader)
      #expect(list.contains(">Purchases on iOS</a>") && !list.contains("Weekly retention"))
      let target = try await client.execute(uri: link, method: .get, headers: [.cookie: reader]) {
        $0.headers[.location] ?? ""
      }
      let (status, shown, _) = try await DashboardTests.get(client, target, cookie: reader)
      #expect(status == .ok && Self.matched(shown) != nil && shown.contains(#"name="event" value="purchase""#))
      let (missing, _, _) = try await DashboardTests.get(client, "/dashboard/view/0000000000000000", cookie: reader)
      #expect(missing == .notFound)
    }
    try await second.store.close()
  }

  /// The funnel is built by picking: with no steps, the app's three most common events (most
  /// common first) and a picker to add a fourth; picked steps (`step`, repeated) up to twenty.
  @Test func theFunnelIsBuiltByPickingEvents() async throws {
    try await onSeededDashboard { client, cookie in
      let (_, start, _) = try await DashboardTests.get(client, "/dashboard/funnel?app=ty", cookie: cookie)
      #expect(
        start.contains("most common events") && start.components(separatedBy: #"<select name="step">"#).count == 5)
      #expect(start.components(separatedBy: #"<span class="bar""#).count == 4, "a three-step funnel at once")
      #expect(start.contains(#"<option value="purchase" selected>"#))
      let picked = ["product_viewed", "add_to_cart", "purchase", "refund"].map { "step=\($0)" }.joined(separator: "&")
      let (_, four, _) = try await DashboardTests.get(
        client, "/dashboard/funnel?app=ty&\(picked)&step=&window=7d", cookie: cookie)
      #expect(four.components(separatedBy: #"<span class="bar""#).count == 5 && !four.contains("most common events"))
      let twentyOne = (0...20).map { "step=e\($0)" }.joined(separator: "&")
      let (tooMany, _, _) = try await DashboardTests.get(
        client, "/dashboard/funnel?app=ty&\(twentyOne)", cookie: cookie)
      #expect(tooMany == .badRequest)
    }
  }

  /// A device's and a person's page: reached from the search's rows, counting what the search
  /// counts for them, with their properties and their timeline by day.
  @Test func devicesAndPeopleHaveAPageWithTheirTimeline() async throws {
    try await onSeededDashboard { client, cookie in
      let (_, search, _) = try await DashboardTests.get(
        client, "/dashboard/search?app=ty&device=device-3", cookie: cookie)
      let link = try #require(search.range(of: #"<a href="/dashboard/profile?"#)).upperBound
      let query = String(search[link...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
      #expect(query.hasSuffix("&device=device-3"))
      let (status, device, _) = try await DashboardTests.get(client, "/dashboard/profile?\(query)", cookie: cookie)
      #expect(status == .ok && device.contains("Device device-3") && device.contains("Timeline"))
      let matched = try #require(Self.matched(search))
      #expect(device.contains("<dt>Events in the range</dt><dd>\(matched)</dd>"))
      #expect(device.contains("<dt>Signed in as</dt>") && device.contains(">u1</a>"))
      #expect(device.components(separatedBy: "<li><time>").count - 1 == matched)
      let (_, person, _) = try await DashboardTests.get(client, "/dashboard/profile?app=ty&user=u1", cookie: cookie)
      #expect(person.contains("Person u1") && person.contains(">device-3</a>") && person.contains(">device-4</a>"))
      let (missing, _, _) = try await DashboardTests.get(client, "/dashboard/profile?app=ty", cookie: cookie)
      #expect(missing == .badRequest)
      #expect(!device.contains(#">Profile</a>"#), "not in the navigation")
    }
  }

  /// Every card's CSV link answers the same figures from the report API, as CSV, in the session.
  @Test(arguments: [
    "/?app=ty", "/dashboard/events?app=ty&event=purchase&parameter=transaction_id", "/dashboard/retention?app=ty",
    "/dashboard/breakdowns?app=ty&platform=iOS", "/dashboard/funnel?app=ty", "/dashboard/counters?app=ty",
    "/dashboard/revenue?app=ty&category=Shoes", "/dashboard/search?app=ty&event=purchase",
  ])
  func everyCardExportsWhatItShowsAsCSV(page: String) async throws {
    try await onSeededDashboard { client, cookie in
      let (_, html, _) = try await DashboardTests.get(client, page, cookie: cookie)
      let links =
        html.components(separatedBy: #"<a class="csv" href=""#).dropFirst().map {
          String($0.prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
        }
        + html.components(separatedBy: #"<a href="/v1/reports/events?"#).dropFirst().map {
          "/v1/reports/events?" + String($0.prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
        }
      #expect(!links.isEmpty, "\(page)")
      for link in links {
        let (status, body, headers) = try await DashboardTests.get(client, link, cookie: cookie)
        #expect(status == .ok && headers[.contentType]?.hasPrefix("text/csv") == true, "\(link): \(body.prefix(200))")
        #expect(body.split(separator: "\n").count >= 1, "\(link)")
      }
    }
  }

  /// Releases (versions first seen) and notes mark every time chart; a reader adds a note, which
  /// only its author or an admin deletes.
  @Test func releasesAndNotesMarkTheTimeCharts() async throws {
    let collector = try await makeCollector()
    try await seedDashboard(collector)
    let (from, to, _) = DashboardTests.lastSevenDays
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let reader = try #require(try await signIn(client, key: readKey).cookie)
      let page = "/?app=ty&from=\(from)&to=\(to)"
      let (_, before, _) = try await DashboardTests.get(client, page, cookie: reader)
      #expect(before.contains("9.0 released") && before.contains("10.0 released"), "seen first in the range")
      #expect(before.components(separatedBy: #"<g class="mark">"#).count == 3)
      let note = [
        ("csrf", try Self.csrf(before)), ("app", "ty"), ("tz", "UTC"), ("day", to), ("text", "Winter campaign"),
        ("next", page),
      ]
      let (added, location, _) = try await Self.post(client, "/annotations/add", note, cookie: reader)
      #expect(added == .seeOther && location == page)
      for shown in [page, "/dashboard/revenue?app=ty&from=\(from)&to=\(to)"] {
        let (_, html, _) = try await DashboardTests.get(client, shown, cookie: reader)
        #expect(
          html.contains("Winter campaign</title>") && html.contains("Winter campaign <span class=\"by\">"), "\(shown)")
        #expect(html.components(separatedBy: #"<g class="mark">"#).count == 4, "\(shown)")
      }
      let (_, after, _) = try await DashboardTests.get(client, page, cookie: reader)
      let idStart = try #require(after.range(of: #"action="/annotations/delete""#)).upperBound
      let id = try #require(after[idStart...].range(of: #"name="id" value=""#)).upperBound
      let noteID = String(after[id...].prefix(16))
      let admin = try #require(try await signIn(client, key: adminKey).cookie)
      let (_, adminPage, _) = try await DashboardTests.get(client, page, cookie: admin)
      let adminNote = note.map {
        $0.0 == "csrf" ? ($0.0, try! Self.csrf(adminPage)) : $0.0 == "text" ? ($0.0, "Outage") : $0
      }
      #expect(try await Self.post(client, "/annotations/add", adminNote, cookie: admin).0 == .seeOther)
      let (_, both, _) = try await DashboardTests.get(client, page, cookie: reader)
      #expect(both.components(separatedBy: #"action="/annotations/delete""#).count == 2, "only the reader's own")
      let (deleted, _, _) = try await Self.post(
        client, "/annotations/delete", [("csrf", try Self.csrf(before)), ("id", noteID), ("next", page)],
        cookie: reader)
      #expect(deleted == .seeOther)
      let (_, last, _) = try await DashboardTests.get(client, page, cookie: reader)
      #expect(!last.contains("Winter campaign") && last.contains("Outage"))
      let (bad, _, _) = try await Self.post(
        client, "/annotations/add", note.map { $0.0 == "day" ? ($0.0, "yesterday") : $0 }, cookie: reader)
      #expect(bad == .badRequest)
    }
    try await collector.store.close()
  }
}
