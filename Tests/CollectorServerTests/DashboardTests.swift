import CollectorDashboard
import CollectorReports
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// Events over the last 7 days (today included): 5 devices, 4 people (devices 3 and 4 are u1's), 4
/// names, one of them hostile HTML; two orders and a refund among them.
func seedDashboard(_ collector: EventCollector) async throws {
  let day: Int64 = 86_400_000
  let today = Int64(Date().timeIntervalSince1970 * 1000) / day * day
  let names = ["product_viewed", "add_to_cart", "purchase", "<script>alert(1)</script>"]
  var events: [StoredEvent] = []
  for index in 0..<60 {
    let time = today - Int64(index % 7) * day + Int64(index) * 60_000
    events.append(
      StoredEvent(
        app: "ty", eventID: "dash-\(index)", name: names[index % 4], kind: "action", occurredAt: time,
        utcOffsetMinutes: 0, receivedAt: time, deviceID: "device-\(index % 5)", userID: index % 5 >= 3 ? "u1" : nil,
        sessionID: Int64(index % 5),
        context: EventContext([
          .appVersion: index % 2 == 0 ? "9.0" : "10.0", .osName: "iOS", .osVersion: "17.4",
          .platform: index % 3 == 0 ? "Android" : "iOS",
        ]),
        parametersJSON: #"{"product_id":"p\#(index % 3)"}"#))
  }
  // Two orders and a refund (the same devices and context): 160 TRY gross, 20 refunded.
  let orders = [
    (
      "order-1", "purchase",
      #"{"transaction_id":"T1","currency":"TRY","value":100,"items":[{"item_id":"A","item_name":"Sneaker","price":50,"quantity":2}]}"#
    ),
    (
      "order-2", "purchase",
      #"{"transaction_id":"T2","currency":"TRY","value":60,"items":[{"item_id":"B","item_name":"<b>Cap</b>","item_brand":"Nike","price":30},{"item_id":"A","price":30}]}"#
    ),
    ("order-3", "refund", #"{"transaction_id":"T1","currency":"TRY","value":20}"#),
  ]
  for (index, (id, name, parameters)) in orders.enumerated() {
    let time = today - Int64(index) * day + 3_600_000
    events.append(
      StoredEvent(
        app: "ty", eventID: id, name: name, kind: "event", occurredAt: time, utcOffsetMinutes: 0, receivedAt: time,
        deviceID: "device-\(index)", userID: nil, sessionID: Int64(index),
        context: EventContext([.appVersion: "9.0", .osName: "iOS", .osVersion: "17.4", .platform: "iOS"]),
        parametersJSON: parameters))
  }
  _ = try await collector.store.write(StoreBatch(events: events))
}

private func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

/// The dashboard through Hummingbird's test client: sign-in, pages, escaping.
@Suite("Dashboard")
struct DashboardTests {
  static func get(_ client: some TestClientProtocol, _ uri: String, cookie: String? = nil) async throws
    -> (HTTPResponse.Status, String, HTTPFields)
  {
    var headers: HTTPFields = [:]
    if let cookie { headers[.cookie] = cookie }
    return try await client.execute(uri: uri, method: .get, headers: headers) {
      ($0.status, String(buffer: $0.body), $0.headers)
    }
  }

  /// The dashboard's default range in UTC (the last 7 days, today included) and the API's `to`
  /// for it (the day after: the API's end is not included).
  static var lastSevenDays: (from: String, to: String, apiTo: String) {
    let day: Int64 = 86_400_000
    let today = Int64(Date().timeIntervalSince1970 * 1000) / day * day
    let days = [today - 6 * day, today, today + day].map { String(ReportTime.iso($0).prefix(10)) }
    return (days[0], days[1], days[2])
  }

  static let basicCredentials: [(user: String, password: String, admitted: Bool)] = [
    ("anyone", adminKey, true), (adminKey, "", true), ("anyone", writeKey, false), (writeKey, "", false),
    ("anyone", "", false),
  ]

  /// One Basic rule on every route: the key is the password, or the user name when the password is
  /// empty (as Mixpanel's /import reads it).
  @Test(arguments: basicCredentials)
  func basicAuthenticationReadsTheKeyByTheSharedRule(user: String, password: String, admitted: Bool) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let header = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
      let status = try await client.execute(uri: "/", method: .get, headers: [.authorization: header]) { $0.status }
      #expect((status == .ok) == admitted, "\(status)")
    }
    try await collector.store.close()
  }

  @Test func everyPageRendersChartsForASignedInAdmin() async throws {
    let collector = try await makeCollector()
    try await seedDashboard(collector)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (denied, form, _) = try await Self.get(client, "/")
      #expect(denied == .unauthorized && form.contains(#"name="key""#))
      let wrong = try await signIn(client, key: writeKey)
      #expect(wrong.status == .unauthorized && wrong.cookie == nil)
      let signedIn = try await signIn(client, key: adminKey, next: "/dashboard/retention")
      #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/dashboard/retention")
      let cookie = try #require(signedIn.cookie)
      #expect(signedIn.headers[.setCookie]?.contains("HttpOnly") == true)
      let offsite = try await signIn(client, key: adminKey, next: "//evil.example")
      #expect(offsite.headers[.location] == "/")

      let (status, overview, _) = try await Self.get(client, "/", cookie: cookie)
      #expect(status == .ok)
      #expect(count(#"class="point""#, in: overview) == 7)  // one per day of the default 7-day range
      #expect(count(#"class="bar""#, in: overview) == 5)  // the four names and refund
      #expect(!overview.contains("<script>") && overview.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
      #expect(overview.contains(#"<span class="value">63</span>"#))
      let pages: [(String, String, Int)] = [
        // Five names; product_id of purchase (the top event): p0, p1, p2 and (none) for the orders.
        ("/dashboard/events?app=ty&parameter=product_id", #"class="bar""#, 5 + 4),
        // Every device is first seen on the first day: one cohort, 7 days.
        ("/dashboard/retention?app=ty", #"class="cell""#, 7),
        ("/dashboard/breakdowns?app=ty", #"class="bar""#, 2 + 2 + 1),
        ("/dashboard/funnel?app=ty&steps=product_viewed,add_to_cart&window=7d", #"class="bar""#, 2),
        ("/dashboard/counters?app=ty", #"class="bar""#, 0),
        ("/dashboard/revenue?app=ty", #"class="point""#, 7),
        ("/dashboard/revenue?app=ty", #"class="bar""#, 2),
        ("/dashboard/revenue?app=ty&brand=Nike", #"class="bar""#, 1),
        ("/dashboard/revenue?app=ty", "140.00", 1),
      ]
      for (uri, needle, expected) in pages {
        let (pageStatus, page, _) = try await Self.get(client, uri, cookie: cookie)
        #expect(pageStatus == .ok, "\(uri)")
        #expect(count(needle, in: page) == expected, "\(uri)")
      }
      let (_, revenue, _) = try await Self.get(client, "/dashboard/revenue?app=ty", cookie: cookie)
      #expect(!revenue.contains("<b>Cap</b>") && revenue.contains("&lt;b&gt;Cap&lt;/b&gt;"))
      // A bad parameter and an unknown page: what is wrong, with the navigation to every page.
      let (bad, badPage, _) = try await Self.get(client, "/?app=ty&from=tomorrow", cookie: cookie)
      #expect(bad == .badRequest && badPage.contains("from: pick days such as 2026-11-01"), "\(badPage)")
      let (missing, missingPage, _) = try await Self.get(client, "/dashboard/nothing", cookie: cookie)
      #expect(missing == .notFound && missingPage.contains("There is no page /dashboard/nothing."))
      #expect(!missingPage.contains(#"name="key""#), "a signed-in viewer is not asked to sign in again")
      for page in [badPage, missingPage] {
        #expect(["/dashboard/retention", "/dashboard/revenue", "/dashboard/quarantine"].allSatisfy(page.contains))
      }
    }
  }

  /// The header's Count picker: people by default, devices when picked; the choice follows the
  /// navigation and every page's own form.
  @Test func theCountPickerCountsPeopleOrDevices() async throws {
    try await onSeededDashboard(key: adminKey) { client, cookie in
      let mau = #"<span class="name">MAU</span><span class="value">"#
      let (_, people, _) = try await Self.get(client, "/?app=ty", cookie: cookie)
      #expect(people.contains(mau + "4<") && people.contains(#"<option value="person" selected>People"#))
      #expect(people.contains("New people"))
      let (_, devices, _) = try await Self.get(client, "/?app=ty&unit=device", cookie: cookie)
      #expect(devices.contains(mau + "5<") && devices.contains(#"<option value="device" selected>Devices"#))
      #expect(devices.contains("/dashboard/retention?app=ty&from=") && devices.contains("&unit=device"))
      let (_, retention, _) = try await Self.get(client, "/dashboard/retention?app=ty&unit=device", cookie: cookie)
      #expect(retention.contains("<th>Devices</th>"))
      // The longest range the pages offer (10 years) answers: the last 400 weeks' cohorts, said so.
      let (decade, tenYears, _) = try await Self.get(
        client, "/dashboard/retention?app=ty&from=2016-12-01&to=2026-11-30", cookie: cookie)
      #expect(decade == .ok && tenYears.contains("the cohorts of the last 400 weeks of the range"), "\(decade)")
      let funnel = "/dashboard/funnel?app=ty&steps=product_viewed,add_to_cart&window=7d"
      let (_, byPerson, _) = try await Self.get(client, funnel, cookie: cookie)
      #expect(byPerson.contains("4 people,") && byPerson.contains(#"name="unit" value="person""#))
      let (_, byDevice, _) = try await Self.get(client, funnel + "&unit=device", cookie: cookie)
      #expect(byDevice.contains("5 devices,"))
      let (bad, _, _) = try await Self.get(client, "/?app=ty&unit=user", cookie: cookie)
      #expect(bad == .badRequest)
    }
  }

  /// The range presets: each link sets only the days (in the page's zone) and keeps every other
  /// filter; "Previous period" is the range of the same length just before.
  @Test func presetsSetTheDaysAndKeepTheRest() async throws {
    let collector = try await makeCollector()
    try await seedDashboard(collector)
    let day: Int64 = 86_400_000
    let today = Int64(Date().timeIntervalSince1970 * 1000) / day * day
    @Sendable func text(_ time: Int64) -> String { String(ReportTime.iso(time).prefix(10)) }
    let monthStart = ReportTime.parse(String(text(today).prefix(8)) + "01")!
    let lastMonthStart = ReportTime.parse(String(text(monthStart - day).prefix(8)) + "01")!
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let cookie = try #require(try await signIn(client, key: adminKey).cookie)
      let (_, page, _) = try await Self.get(
        client, "/dashboard/retention?app=ty&from=2026-11-10&to=2026-11-16&platform=iOS", cookie: cookie)
      let expected = [
        ("Last 7 days", text(today - 6 * day), text(today)), ("Last 30 days", text(today - 29 * day), text(today)),
        ("This month", text(monthStart), text(today)), ("Last month", text(lastMonthStart), text(monthStart - day)),
        ("Previous period", "2026-11-03", "2026-11-09"),
      ]
      for (name, from, to) in expected {
        let link =
          #"<a href="/dashboard/retention?app=ty&amp;from=\#(from)&amp;to=\#(to)&amp;unit=person&amp;tz=UTC&amp;platform=iOS">\#(name)</a>"#
        #expect(page.contains(link), "\(name)")
      }
    }
    try await collector.store.close()
  }

  /// One filter on every page and in the API: the platform and the days give the page the API's
  /// numbers for the exact range the page states, every link keeps them, and the Count picker is
  /// offered only where people or devices are counted.
  @Test(arguments: ["", "Android", "iOS"])
  func thePagesFilterIsTheAPIs(platform: String) async throws {
    let collector = try await makeCollector()
    try await seedDashboard(collector)
    let (from, to, apiTo) = Self.lastSevenDays
    let today = ReportTime.parse(to)!
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let cookie = try #require(try await signIn(client, key: adminKey).cookie)
      let query = "app=ty&from=\(from)&to=\(to)" + (platform.isEmpty ? "" : "&platform=\(platform)")
      let (status, page, _) = try await Self.get(client, "/?\(query)", cookie: cookie)
      #expect(status == .ok)
      // The API's `to` is not included: the page's To day is, so the API's range ends the day after.
      let api = "app=ty&from=\(from)&to=\(apiTo)&platform=\(platform)"
      let (_, json, _) = try await ReportRouteTests.get(client, "/v1/reports/overview?\(api)")
      let overview = try JSONDecoder().decode(Overview.self, from: Data(json.utf8))
      #expect(page.contains(#"<span class="name">Events</span><span class="value">\#(overview.current.events)</span>"#))
      #expect(page.contains("\(from)T00:00:00Z to \(ReportTime.iso(today + 86_400_000)) (UTC; the end not included)"))
      #expect(overview.current.events == (platform == "" ? 63 : platform == "Android" ? 20 : 43), "\(json)")
      let (_, search, _) = try await Self.get(client, "/dashboard/search?\(query)", cookie: cookie)
      #expect(DashboardSearchTests.matched(search) == Int(overview.current.events), "the search counts the same")
      let pages = [
        ("/", true), ("/dashboard/events", false), ("/dashboard/retention", true), ("/dashboard/breakdowns", false),
        ("/dashboard/funnel", true), ("/dashboard/counters", false), ("/dashboard/revenue", false),
        ("/dashboard/quarantine", false), ("/dashboard/search", false), ("/dashboard/saved", false),
        ("/dashboard/live", false),
      ]
      for (other, countsUsers) in pages {
        let (answer, html, _) = try await Self.get(client, "\(other)?\(query)", cookie: cookie)
        #expect(answer == .ok, "\(other)")
        #expect(html.contains(#"name="unit"><option"#) == countsUsers, "\(other)")
        if !platform.isEmpty {
          #expect(html.contains(#"name="platform" size="8" placeholder="all" value="\#(platform)""#), "\(other)")
          #expect(html.contains("&platform=\(platform)"), "\(other): links keep the filter")
        }
      }
    }
    try await collector.store.close()
  }
}

/// The dashboard in a real headless Chromium (Debian's package, installed by `.ci/run`), driven as a
/// person would: sign in through the form, open each page (no console errors, the expected chart
/// points), screenshots at desktop and phone widths (`artifacts/`), sign out.
@Suite("Dashboard in Chromium", .serialized)
struct DashboardBrowserTests {
  static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  @Test("Chromium is installed when running in CI")
  func chromiumInCI() {
    if PostgresTestServer.isCI { #expect(Self.chromium != nil, ".ci/run installs Debian's chromium") }
  }

  /// Runs `Tests/Support/chromium-session.py` (the DevTools protocol over a pipe) against `base`.
  static func session(
    base: String, key: String, pages: [String] = [], screenshots: [(String, Int, Int, String)] = [],
    live: [String: Any]? = nil, steps: [[String: Any]] = [], measure: [(Int, Int, String, Bool)] = []
  ) async throws -> [String: Any] {
    let directory = TemporaryDirectory()
    try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Support/chromium-session.py")
    let configuration: [String: Any] = [
      "chromium": try #require(chromium), "base": base, "key": key,
      "profile": directory.url.appendingPathComponent("profile").path, "pages": pages,
      "screenshots": screenshots.map { [$0.0, $0.1, $0.2, $0.3] as [Any] }, "live": live ?? NSNull(),
      "steps": steps, "measure": measure.map { [$0.0, $0.1, $0.2, $0.3] as [Any] },
    ]
    let output = directory.url.appendingPathComponent("out.json")
    #expect(FileManager.default.createFile(atPath: output.path, contents: nil))
    let process = try ChildProcess(
      "/usr/bin/env",
      arguments: [
        "python3", script.path,
        String(decoding: try JSONSerialization.data(withJSONObject: configuration), as: UTF8.self),
      ], output: .handle(try FileHandle(forWritingTo: output)), ownGroup: true)
    // Past the deadline the script and the Chromium it started are killed together: a browser left
    // behind would hold its connections to the test's server open and keep it from shutting down.
    let deadline = Date().addingTimeInterval(150)
    while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
    if process.isRunning { process.send(SIGKILL) }
    await process.exit()
    let data = try Data(contentsOf: output)
    return try #require(
      try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
  }

  /// A person's session in a real browser: the sign-in form, pages, screenshots, sign-out. The key
  /// is in no URL of the history, the cookie is the session's (flags set, no key in it), pages load
  /// without console errors (the Content-Security-Policy blocks nothing they need), and after
  /// signing out the old cookie opens no page.
  @Test(.enabled(if: chromium != nil)) func aSessionInChromiumKeepsTheKeyOutOfURLsAndEndsOnSignOut() async throws {
    // The test client's connection waits while Chromium works (a minute or more on a busy machine):
    // the idle timeout must not close it under the last request.
    let collector = try await makeCollector(configure: {
      $0.security.secureCookies = .always
      $0.idleTimeoutSeconds = 600
    })
    try await seedDashboard(collector)
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let base = "http://127.0.0.1:\(try #require(client.port))"
      let pages: [(String, String, Int)] = [
        ("/", #"class="point""#, 7), ("/dashboard/events?app=ty", #"class="bar""#, 5),
        ("/dashboard/retention?app=ty", #"class="cell""#, 7), ("/dashboard/breakdowns?app=ty", #"class="bar""#, 5),
        ("/dashboard/funnel?app=ty&steps=product_viewed,add_to_cart", #"class="bar""#, 2),
        ("/dashboard/counters?app=ty", "No data in this range", 1),
        ("/dashboard/revenue?app=ty", #"class="point""#, 7), ("/dashboard/audit", "sign-in", 1),
        ("/dashboard/quarantine?app=ty", "Held entries by reason", 1),
        ("/dashboard/live?app=ty", #"id="live-rows""#, 1),
      ]
      try FileManager.default.createDirectory(atPath: "artifacts", withIntermediateDirectories: true)
      let folder = FileManager.default.currentDirectoryPath + "/artifacts/"
      let shots = [
        (folder + "dashboard-overview.png", 1280, 1000, "/"), (folder + "dashboard-overview-phone.png", 390, 1400, "/"),
        (folder + "dashboard-revenue.png", 1280, 1200, "/dashboard/revenue?app=ty"),
      ]
      let result = try await Self.session(base: base, key: adminKey, pages: pages.map(\.0), screenshots: shots)
      #expect(result["error"] == nil, "\(result["error"] ?? "")")
      let history = try #require(result["history"] as? [String])
      #expect(history.count >= 4 && history.allSatisfy { !$0.contains(adminKey) && !$0.contains("key=") }, "\(history)")
      let afterSignIn = try #require(result["afterSignIn"] as? [String: Any])
      #expect(afterSignIn["url"] as? String == base + "/dashboard/events")
      let cookies = try #require(result["cookies"] as? [[String: Any]])
      let cookie = try #require(cookies.first { ($0["name"] as? String) == "__Host-collector_session" }, "\(cookies)")
      let token = try #require(cookie["value"] as? String)
      #expect(token.count == 64 && !token.contains(adminKey) && !adminKey.contains(token))
      #expect(cookie["httpOnly"] as? Bool == true && cookie["secure"] as? Bool == true)
      #expect(cookie["sameSite"] as? String == "Strict" && cookie["path"] as? String == "/")
      for (page, (path, needle, expected)) in zip(try #require(result["pages"] as? [[String: Any]]), pages) {
        let html = page["html"] as? String ?? ""
        #expect(count(needle, in: html) == expected, "\(path): \(html.prefix(300))")
        #expect((page["console"] as? [String])?.isEmpty == true, "\(path): \(page["console"] ?? "")")
      }
      for (path, _, _, _) in shots {
        let png = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000, "\(path)")
      }
      let afterSignOut = try #require(result["afterSignOut"] as? [String: Any])
      #expect((afterSignOut["html"] as? String)?.contains(#"action="/login""#) == true)
      #expect((result["cookiesAfterSignOut"] as? [[String: Any]])?.isEmpty == true)
      let (status, _, _) = try await DashboardTests.get(client, "/", cookie: "__Host-collector_session=\(token)")
      #expect(status == .unauthorized, "the old cookie no longer opens a page")
    }
  }

  /// The live page in a real browser: opened first, it shows an event sent after it opened and,
  /// beside it, an event the collector refused, with the reason it is held in the quarantine.
  @Test(.enabled(if: chromium != nil)) func theLivePageShowsEventsSentAfterItOpenedAndTheQuarantined() async throws {
    let collector = try await makeCollector(configure: { $0.idleTimeoutSeconds = 600 })
    try await seedDashboard(collector)
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let base = "http://127.0.0.1:\(try #require(client.port))"
      let old = Batches.now - 400 * 86_400_000
      let body = Batches.body([
        Batches.event("browser-live-1", device: "tapping-phone"), Batches.event("gone", at: old),
      ])
      let live: [String: Any] = [
        "path": "/dashboard/live?app=ty",
        "posts": [
          [
            "url": base + "/v1/batch", "body": String(decoding: body, as: UTF8.self),
            "headers": ["Authorization": "Bearer \(writeKey)", "Content-Type": "application/json"],
          ]
        ],
        "expect": ["tapping-phone", "quarantined", "timestamp"],
      ]
      let result = try await Self.session(base: base, key: adminKey, pages: [], screenshots: [], live: live)
      #expect(result["error"] == nil, "\(result["error"] ?? "")")
      let watched = try #require(result["live"] as? [String: Any], "\(result)")
      #expect(watched["opened"] as? Bool == true, "the stream opened: \(watched["status"] ?? "")")
      #expect(watched["statuses"] as? [Int] == [200])
      #expect(watched["shown"] as? Bool == true, "\(watched["rows"] ?? "")")
      let rows = watched["rows"] as? String ?? ""
      #expect(rows.contains("stored") && rows.contains("product_viewed"), "\(rows)")
      #expect((watched["console"] as? [String])?.isEmpty == true, "\(watched["console"] ?? "")")
    }
  }

  /// Saved searches and drill-down in a real browser: a search saved through its form is listed,
  /// outlives a restart of the collector and opens from its link; following a chart bar lists as
  /// many events as the bar counts.
  @Test(.enabled(if: chromium != nil)) func aSavedSearchOutlivesARestartAndABarOpensItsEvents() async throws {
    let path = TestFiles.unique("browser", suffix: ".sqlite").path
    let first = try await makeCollector(path: path, configure: { $0.idleTimeoutSeconds = 600 })
    try await seedDashboard(first)
    let (link, purchases) = try await first.application(closesStore: false).test(.live) {
      client async throws -> (String, Int?) in
      let base = "http://127.0.0.1:\(try #require(client.port))"
      let steps: [[String: Any]] = [
        ["open": "/dashboard/search?app=ty&event=purchase"],
        ["submit": #"form[action="/views/save"]"#, "fill": [[#"input[name="name"]"#, "Purchases this week"]]],
        ["open": "/dashboard/events?app=ty"], ["follow": "a.drill"],
      ]
      let result = try await Self.session(base: base, key: readKey, steps: steps)
      #expect(result["error"] == nil, "\(result["error"] ?? "")")
      let pages = try #require(result["steps"] as? [[String: Any]])
      try #require(pages.count == 4)
      let saved = pages[1]["html"] as? String ?? ""
      #expect((pages[1]["url"] as? String)?.hasSuffix("/dashboard/saved?app=ty") == true)
      #expect(saved.contains(">Purchases this week</a>"), "\(saved.suffix(2000))")
      let bars = DashboardSearchTests.drills(pages[2]["html"] as? String ?? "")
      let opened = pages[3]["html"] as? String ?? ""
      #expect(!bars.isEmpty && DashboardSearchTests.matched(opened) == bars.first?.count, "\(bars)")
      #expect(pages.allSatisfy { ($0["console"] as? [String])?.isEmpty == true })
      let start = try #require(saved.range(of: #"<a href="/dashboard/view/"#))
      let searched = DashboardSearchTests.matched(pages[0]["html"] as? String ?? "")
      #expect(searched == 17, "15 seeded purchase events and 2 orders")
      return ("/dashboard/view/" + saved[start.upperBound...].prefix { $0 != "\"" }, searched)
    }
    try await first.store.close()
    let second = try await makeCollector(path: path, configure: { $0.idleTimeoutSeconds = 600 })
    try await second.application(closesStore: false).test(.live) { client async throws in
      let base = "http://127.0.0.1:\(try #require(client.port))"
      let result = try await Self.session(base: base, key: readKey, steps: [["open": link]])
      let page = try #require((result["steps"] as? [[String: Any]])?.first, "\(result)")
      let html = page["html"] as? String ?? ""
      #expect(
        (page["url"] as? String)?.contains("/dashboard/search?app=ty&event=purchase") == true, "\(page["url"] ?? "")")
      #expect(DashboardSearchTests.matched(html) == purchases && html.contains(#"value="Purchases this week""#))
    }
    try await second.store.close()
  }

  /// Every page on a 390 px phone: no text under 12 px (charts included), nothing wider than the
  /// screen, no bar label cut short; in the system's dark scheme the page is dark.
  @Test(.enabled(if: chromium != nil)) func everyPageIsReadableOnAPhoneAndFollowsDarkMode() async throws {
    let collector = try await makeCollector(configure: { $0.idleTimeoutSeconds = 600 })
    try await seedDashboard(collector)
    try await DashboardDrillDownTests.seedDropOffs(collector)
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let base = "http://127.0.0.1:\(try #require(client.port))"
      let examples: [DashboardPage: String] = [
        .funnel: "/dashboard/funnel?app=ty&steps=product_viewed,add_to_cart,purchase&window=7d&dropped=1",
        .retention: "/dashboard/retention?app=ty&cohort=\(DashboardTests.lastSevenDays.from)&offset=1",
        .events: "/dashboard/events?app=ty&parameter=product_id", .search: "/dashboard/search?app=ty&event=purchase",
        .profile: "/dashboard/profile?app=ty&device=device-3",
      ]
      let pages = DashboardPage.allCases.map { examples[$0] ?? $0.path + "?app=ty" }
      let measure = pages.map { (390, 844, $0, false) } + [(390, 844, "/?app=ty", true), (1280, 900, "/?app=ty", true)]
      // Docs/Dashboard.md's screenshots: every page at desktop and phone width.
      let folder = FileManager.default.currentDirectoryPath + "/artifacts/dashboard/"
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      let shots = DashboardPage.allCases.flatMap { page in
        let path = examples[page] ?? page.path + "?app=ty"
        return [
          (folder + "\(page.rawValue)-desktop.jpg", 1280, 900, path),
          (folder + "\(page.rawValue)-phone.jpg", 390, 844, path),
        ]
      }
      let result = try await Self.session(base: base, key: adminKey, screenshots: shots, measure: measure)
      for (path, _, _, _) in shots {
        let image = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(image.starts(with: [0xFF, 0xD8]) && image.count > 5_000, "\(path)")
      }
      #expect(result["error"] == nil, "\(result["error"] ?? "")")
      let measured = try #require(result["measured"] as? [[String: Any]])
      #expect(measured.count == measure.count)
      for (page, entry) in zip(measured, measure) {
        let smallest = page["smallest"] as? [Any] ?? []
        #expect((smallest.first as? Double ?? 0) >= 12, "\(entry.2): \(smallest)")
        #expect((page["width"] as? Int ?? 10_000) <= entry.0, "\(entry.2) at \(entry.0) px: \(page["width"] ?? "")")
        #expect((page["cut"] as? [String])?.isEmpty == true, "\(entry.2): \(page["cut"] ?? "")")
        let dark = page["background"] as? String == "rgb(17, 24, 39)"
        #expect(dark == entry.3, "\(entry.2): \(page["background"] ?? "")")
      }
    }
    try await collector.store.close()
  }

  /// A product team's morning in a real browser: a funnel built with the pickers, a note added under
  /// the events chart, a device opened from the search's rows, and the platform filter giving the
  /// same number on the overview, in the search and in the API.
  @Test(.enabled(if: chromium != nil)) func pickersNotesDevicePagesAndOneFilterInTheBrowser() async throws {
    let collector = try await makeCollector(configure: { $0.idleTimeoutSeconds = 600 })
    try await seedDashboard(collector)
    let (from, to, apiTo) = DashboardTests.lastSevenDays
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let base = "http://127.0.0.1:\(try #require(client.port))"
      let pick =
        #"const s = document.querySelectorAll('select[name="step"]'); s[0].value = "add_to_cart"; "#
        + #"s[1].value = "purchase"; s[2].value = ""; s[3].value = ""; true"#
      let steps: [[String: Any]] = [
        ["open": "/dashboard/funnel?app=ty"], ["eval": pick], ["submit": "form.steps"],
        ["open": "/?app=ty"],
        ["submit": #"form[action="/annotations/add"]"#, "fill": [[#"input[name="text"]"#, "Black Friday"]]],
        ["open": "/dashboard/search?app=ty&event=purchase"], ["follow": #"a[href^="/dashboard/profile"]"#],
        ["open": "/?app=ty&from=\(from)&to=\(to)&platform=iOS"],
        ["open": "/dashboard/search?app=ty&from=\(from)&to=\(to)&platform=iOS"],
        ["open": "/v1/reports/overview?app=ty&from=\(from)&to=\(apiTo)&platform=iOS"],
      ]
      let result = try await Self.session(base: base, key: readKey, steps: steps)
      #expect(result["error"] == nil, "\(result["error"] ?? "")")
      let pages = try #require(result["steps"] as? [[String: Any]])
      try #require(pages.count == steps.count)
      let html = pages.map { $0["html"] as? String ?? "" }
      #expect(
        html[0].contains("most common events") && html[0].components(separatedBy: #"<span class="bar""#).count == 4)
      #expect(
        (pages[2]["url"] as? String)?.contains("step=add_to_cart&step=purchase") == true, "\(pages[2]["url"] ?? "")")
      #expect(html[2].components(separatedBy: #"<span class="bar""#).count == 3 && !html[2].contains("most common"))
      #expect(
        html[4].contains("Black Friday</title>") && html[4].contains("Black Friday <span"), "the note is on the chart")
      #expect((pages[6]["url"] as? String)?.contains("/dashboard/profile?") == true && html[6].contains("Timeline"))
      let figure = #"<span class="name">Events</span><span class="value">"#
      let overview = try #require(html[7].components(separatedBy: figure).dropFirst().first?.prefix { $0.isNumber })
      let api = try JSONDecoder().decode(
        Overview.self,
        from: Data(
          (html[9].components(separatedBy: "<pre").dropFirst().first ?? "").drop { $0 != ">" }.dropFirst()
            .prefix { $0 != "<" }.utf8))
      #expect(Int(overview) == Int(api.current.events) && DashboardSearchTests.matched(html[8]) == Int(overview))
      #expect(pages.allSatisfy { ($0["console"] as? [String])?.isEmpty == true })
    }
    try await collector.store.close()
  }
}

/// A collector with the dashboard's events (``seedDashboard(_:)``, then `seed`), served to `body`
/// through the router with the session cookie of `key`; its store is closed afterwards.
func onSeededDashboard(
  key: String = readKey, seed: (EventCollector) async throws -> Void = { _ in },
  _ body: @escaping @Sendable (any TestClientProtocol, _ cookie: String) async throws -> Void
) async throws {
  let collector = try await makeCollector()
  try await seedDashboard(collector)
  try await seed(collector)
  try await collector.application(closesStore: false).test(.router) { client async throws in
    try await body(client, try #require(try await signIn(client, key: key).cookie))
  }
  try await collector.store.close()
}
