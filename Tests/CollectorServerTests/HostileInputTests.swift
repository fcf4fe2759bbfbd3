import CollectorIngest
import CollectorPostgres
import CollectorReports
import CollectorRuntime
import CollectorServer
import CollectorStore
import CollectorWire
import Delivery
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// What anyone holding a write key (it ships in every app) or an admin key can send: numeric edges in
/// every numeric field, hostile text in every identifier, broken gzip. Every answer is a 2xx or a
/// 4xx naming the field, never a 5xx or a crash; `/health` still answers; the valid events of a
/// batch are stored beside a hostile one.
@Suite("Hostile input", .timeLimit(.minutes(5)))
struct HostileInputTests {
  /// Numeric edges, as JSON number literals.
  static let numbers = [
    "0", "-0", "0.0", "1.5", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
    "-9223372036854775809", "1e400", "-1e400", "1e-400", "1e300", "-1e300", "1e18", "253402300800000",
  ]

  /// The fields of a native batch that hold numbers, and how a literal replaces each.
  static let nativeFields: [(name: String, perEvent: Bool)] = [
    ("sentAt", false), ("timestamp", true), ("utcOffsetMinutes", true), ("sessionId", true), ("parameter", true),
    ("count", false), ("firstCountedAt", false),
  ]

  static func nativeBatch(_ round: Int, field: String, value: String) -> [UInt8] {
    let now = String(Batches.now)
    func pick(_ name: String, _ fallback: String) -> String { name == field ? value : fallback }
    let context = String(decoding: try! JSONEncoder().encode(Batches.context), as: UTF8.self)
    let json = """
      {"sentAt":\(pick("sentAt", now)),"context":\(context),"events":[\
      {"id":"ok-\(round)","name":"n","kind":"action","timestamp":\(now),"anonymousId":"d"},\
      {"id":"bad-\(round)","name":"n","kind":"action","timestamp":\(pick("timestamp", now)),\
      "utcOffsetMinutes":\(pick("utcOffsetMinutes", "0")),"sessionId":\(pick("sessionId", "1")),\
      "anonymousId":"d","parameters":{"x":\(pick("parameter", "1"))}}],\
      "counters":[{"name":"c","count":\(pick("count", "1")),"firstCountedAt":\(pick("firstCountedAt", now)),\
      "anonymousId":"d","id":"counter-\(round)"}]}
      """
    return Array(json.utf8)
  }

  static func execute(
    _ client: some TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get, key: String? = adminKey,
    body: [UInt8] = [], headers extra: HTTPFields = [:]
  ) async throws -> (status: Int, text: String, headers: HTTPFields) {
    var headers = extra
    if let key { headers[.authorization] = "Bearer \(key)" }
    return try await client.execute(uri: uri, method: method, headers: headers, body: ByteBuffer(bytes: body)) {
      (Int($0.status.code), String(buffer: $0.body), $0.headers)
    }
  }

  static func expectHealthy(_ client: some TestClientProtocol) async throws {
    #expect(try await execute(client, "/health", key: nil).status == 200)
  }

  @Test("every numeric field of a native batch takes every edge: no 5xx, the valid event stored")
  func nativeNumbers() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var round = 0
      for (field, perEvent) in Self.nativeFields {
        for value in Self.numbers {
          round += 1
          let answer = try await Self.execute(
            client, "/v1/batch", method: .post, key: writeKey, body: Self.nativeBatch(round, field: field, value: value)
          )
          #expect(answer.status == 200 || (400..<500).contains(answer.status), "\(field)=\(value): \(answer)")
          if perEvent {
            // A bad number in one event refuses that event alone: the valid one is stored.
            #expect(answer.status == 200, "\(field)=\(value): \(answer.text)")
            if answer.status == 200 {
              let response = try JSONDecoder().decode(BatchResponse.self, from: Data(answer.text.utf8))
              #expect(response.accepted >= 1, "\(field)=\(value): \(answer.text)")
            }
          } else if answer.status != 200 {
            #expect(answer.text.contains(#""field":""#), "\(field)=\(value): \(answer.text)")
          }
        }
      }
      try await Self.expectHealthy(client)
    }
    let stored = try await collector.store.events(app: "ty", limit: 10_000)
    #expect(stored.allSatisfy { CollectorLimits.validTimes.contains($0.occurredAt) })
  }

  @Test(
    "a clock-skew correction that would overflow Int64 is a 400 naming sentAt",
    arguments: ["9223372036854775807", "-9223372036854775808", "253402300800000"])
  func skewOverflow(sentAt: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let answer = try await Self.execute(
        client, "/v1/batch", method: .post, key: writeKey, body: Self.nativeBatch(1, field: "sentAt", value: sentAt))
      #expect(answer.status == 400)
      #expect(answer.text.contains(#""field":"sentAt""#))
      try await Self.expectHealthy(client)
    }
  }

  @Test(
    "Mixpanel /import: a time of any size is refused alone; the valid event is stored",
    arguments: ["1e300", "-1e300", "-9223372036854775808", "9223372036854775807", "-9000000000000000", "1e-300"])
  func mixpanelTime(time: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let now = Batches.now / 1000
      let body = """
        [{"event":"ok","properties":{"distinct_id":"d","time":\(now),"$insert_id":"ok-1"}},\
        {"event":"bad","properties":{"distinct_id":"d","time":\(time),"$insert_id":"bad-1"}}]
        """
      let answer = try await Self.execute(
        client, "/import?strict=1", method: .post, key: nil, body: Array(body.utf8),
        headers: [.authorization: "Basic " + Data("\(writeKey):".utf8).base64EncodedString()])
      #expect(answer.status == 400 || answer.status == 200, "\(answer)")
      #expect(answer.text.contains("properties.time"), "\(answer.text)")
      try await Self.expectHealthy(client)
    }
    #expect(try await collector.store.events(app: "ty", limit: 10).map(\.name) == ["ok"])
  }

  /// Report parameters at their edges, on every report and the dashboard pages.
  static let reportValues = [
    "9223372036854775807", "-9223372036854775808", "9223372036854775806", "-1", "0", "1e400", "NaN", "1.5",
    "99999999999999999999", "2026-13-45", "%00", "a%00b", "+", "",
  ]

  /// One test case per report and per dashboard page (each its own collector), so that a busy
  /// machine spreads them and each meets the suite's time limit.
  @Test(
    "every report parameter takes every edge: 200 or 4xx, never 5xx, no SQL in an answer",
    arguments: ["overview", "top-events", "events", "timeseries", "retention", "funnel", "parameter-values"])
  func reportParameters(report: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let body = Batches.body((0..<3).map { Batches.event("r\($0)") })
      #expect(try await Self.execute(client, "/v1/batch", method: .post, key: writeKey, body: body).status == 200)
      let parameters = ["from", "to", "window", "limit", "after", "event", "parameter", "steps", "app", "platform"]
      for parameter in parameters {
        for value in Self.reportValues {
          var query = "app=ty&event=product_viewed&parameter=price&steps=a,b&\(parameter)=\(value)"
          if parameter == "app" { query = "app=\(value)&steps=a,b" }
          let answer = try await Self.execute(client, "/v1/reports/\(report)?\(query)")
          #expect((200..<500).contains(answer.status), "\(report) \(parameter)=\(value): \(answer.status)")
          #expect(!answer.text.contains("SELECT"), "\(report) \(parameter)=\(value): \(answer.text)")
        }
      }
      try await Self.expectHealthy(client)
    }
  }

  @Test(
    "every dashboard parameter takes every edge: 200 or 4xx, never 5xx",
    arguments: ["/", "/dashboard/events", "/dashboard/funnel", "/dashboard/retention", "/dashboard/counters"])
  func dashboardParameters(page: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let body = Batches.body((0..<3).map { Batches.event("r\($0)") })
      #expect(try await Self.execute(client, "/v1/batch", method: .post, key: writeKey, body: body).status == 200)
      for parameter in ["from", "to", "window", "event", "parameter", "app"] {
        for value in Self.reportValues {
          let answer = try await Self.execute(client, "\(page)?app=ty&steps=a,b&\(parameter)=\(value)")
          #expect((200..<500).contains(answer.status), "\(page) \(parameter)=\(value): \(answer.status)")
        }
      }
      try await Self.expectHealthy(client)
    }
  }

  @Test("counter totals past Int64.max saturate: overview, counters and the dashboard answer 200")
  func counterOverflow() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for index in 0..<3 {
        let counter = CollectorCounter(
          name: "taps", count: Int64.max, firstCountedAt: Batches.now, anonymousId: "d\(index)", id: "c\(index)")
        let body = Batches.body([], counters: [counter])
        #expect(try await Self.execute(client, "/v1/batch", method: .post, key: writeKey, body: body).status == 200)
      }
      let overview = try await Self.execute(client, "/v1/reports/overview?app=ty")
      #expect(overview.status == 200, "\(overview.text)")
      #expect(overview.text.contains(#""counters":9223372036854775807"#), "\(overview.text)")
      let counters = try await Self.execute(client, "/v1/reports/counters?app=ty")
      #expect(counters.status == 200)
      #expect(counters.text.contains("9223372036854775807"))
      #expect(try await Self.execute(client, "/dashboard/counters?app=ty").status == 200)
      #expect(try await Self.execute(client, "/?app=ty").status == 200)
    }
  }

  static let gzipCases: [(String, [UInt8])] = {
    let valid: [UInt8] = Gzip.compress(Batches.body([Batches.event("g")]))
    return [
      ("one extra byte", valid + [0x00]),
      ("no trailer", Array(valid.dropLast(8))),
      ("half the trailer", Array(valid.dropLast(3))),
      ("truncated", Array(valid.prefix(30))),
      ("header only", Array(valid.prefix(10))),
      ("trailing text", valid + Array("garbage".utf8)),
      ("empty", []),
      ("not gzip", Batches.body([Batches.event("g")])),
    ]
  }()

  @Test("gzip: trailing bytes, a missing trailer, truncation and garbage end in a 400", arguments: gzipCases)
  func brokenGzip(label: String, body: [UInt8]) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for _ in 0..<3 {
        let answer = try await Self.execute(
          client, "/v1/batch", method: .post, key: writeKey, body: body, headers: [.contentEncoding: "gzip"])
        #expect(answer.status == 400, "\(label): \(answer)")
      }
      try await Self.expectHealthy(client)
    }
    #expect(try await collector.store.eventCount(app: nil) == 0)
  }

  @Test("gzip members written one after another are read as one body")
  func concatenatedGzip() async throws {
    let collector = try await makeCollector()
    let whole = Batches.body([Batches.event("m1"), Batches.event("m2")])
    let cut = whole.count / 2
    let body = Gzip.compress(Array(whole[..<cut])) + Gzip.compress(Array(whole[cut...]))
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let answer = try await Self.execute(
        client, "/v1/batch", method: .post, key: writeKey, body: body, headers: [.contentEncoding: "gzip"])
      #expect(answer.status == 200, "\(answer.text)")
    }
    #expect(try await collector.store.eventCount(app: "ty") == 2)
  }

  @Test(
    "control characters in identifiers are a 400 naming the parameter (event names: a NUL only, as stored)",
    arguments: [
      ("/v1/reports/parameter-values?app=ty&event=product_viewed&parameter=a%00b", "parameter"),
      ("/v1/reports/top-events?app=t%00y", "app"),
      ("/v1/reports/events?app=ty&event=a%00b", "event"),
      ("/v1/reports/overview?app=ty&platform=i%0Aos", "platform"),
      ("/v1/reports/funnel?app=ty&steps=a,b%00", "steps"),
    ])
  func controlCharactersInReports(uri: String, field: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let answer = try await Self.execute(client, uri)
      #expect(answer.status == 400, "\(answer)")
      #expect(answer.text.contains(#""field":"\#(field)""#), "\(answer.text)")
    }
  }

  @Test("erasure refuses a NUL in the id: victim%00x erases nothing, %00 is not 'every empty id'")
  func erasureWithNUL() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let body = Batches.body([Batches.event("v1", device: "victim")])
      #expect(try await Self.execute(client, "/v1/batch", method: .post, key: writeKey, body: body).status == 200)
      // A device id may be empty where a client sends one so (SimpleAnalytics' `device_id: ""`); the
      // native API refuses it, so the row is written directly.
      var empty = try #require(try await collector.store.events(app: "ty", limit: 1).first)
      empty.eventID = "e1"
      empty.deviceID = ""
      _ = try await collector.store.write(StoreBatch(events: [empty]))
      for query in ["deviceId=victim%00x", "deviceId=%00", "userId=%00", "deviceId=&userId="] {
        let answer = try await Self.execute(client, "/v1/events?app=ty&\(query)", method: .delete)
        #expect(answer.status == 400, "\(query): \(answer)")
      }
    }
    #expect(try await collector.store.eventCount(app: "ty") == 2)
  }

  @Test(
    "sign-in redirects only to paths of this site",
    arguments: [
      ("/%5Cevil.example", "/"), ("/%09/evil.example", "/"), ("//evil.example", "/"), ("https://evil.example", "/"),
      ("/%2F%2Fevil.example", "/"), ("/%0A/evil.example", "/"),
      ("/dashboard/events?app=ty", "/dashboard/events?app=ty"),
    ])
  func loginRedirect(next: String, location: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let answer = try await signIn(client, key: adminKey, next: next.removingPercentEncoding ?? next)
      #expect(answer.status == .seeOther)
      #expect(answer.headers[.location] == location, "\(next)")
    }
  }

  @Test("CSV cells a spreadsheet would evaluate are escaped; numbers are kept")
  func csvInjection() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var events = ["=HYPERLINK(\"x\")", "+1+2", "@SUM(A1)", "-2+3"].enumerated().map { index, name in
        var event = Batches.event("csv\(index)")
        event.name = name
        return event
      }
      events.append(Batches.event("plain"))
      let body = Batches.body(events)
      #expect(try await Self.execute(client, "/v1/batch", method: .post, key: writeKey, body: body).status == 200)
      let csv = try await Self.execute(client, "/v1/reports/top-events?app=ty&format=csv").text
      let cells = csv.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",").first.map(String.init) ?? "" }
      #expect(Set(cells) == [#""'=HYPERLINK(""x"")""#, #""'+1+2""#, #""'@SUM(A1)""#, #""'-2+3""#, "product_viewed"])
    }
    #expect(ReportTable.csvCell("-3") == "-3")
    #expect(ReportTable.csvCell("12.5") == "12.5")
  }

  @Test("query strings: `+` and `%20` are both a space, `%2B` a plus", arguments: ["Logged+in", "Logged%20in"])
  func plusIsASpace(event: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var logged = Batches.event("l1")
      logged.name = "Logged in"
      var plus = Batches.event("l2")
      plus.name = "a+b"
      let body = Batches.body([logged, plus])
      #expect(try await Self.execute(client, "/v1/batch", method: .post, key: writeKey, body: body).status == 200)
      let rows = try await Self.execute(client, "/v1/reports/events?app=ty&event=\(event)")
      #expect(rows.text.contains(#""eventID":"l1""#), "\(rows.text)")
      let plusRows = try await Self.execute(client, "/v1/reports/events?app=ty&event=a%2Bb")
      #expect(plusRows.text.contains(#""eventID":"l2""#), "\(plusRows.text)")
    }
  }
}

extension HostileInputTests {
  @Test(
    "GA4 /mp/collect and /debug/mp/collect: timestamp_micros and parameter numbers at every edge",
    arguments: ["timestamp_micros", "session_id", "value", "request timestamp_micros"])
  func ga4Numbers(field: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let now = String(Batches.now * 1000)
      for (round, number) in Self.numbers.enumerated() {
        func pick(_ name: String, _ fallback: String) -> String { name == field ? number : fallback }
        let body = """
          {"app_instance_id":"a1b2","timestamp_micros":\(pick("request timestamp_micros", now)),"events":[\
          {"name":"ok_\(round)","params":{"session_id":1,"engagement_time_msec":5},"timestamp_micros":\(now)},\
          {"name":"bad_\(round)","timestamp_micros":\(pick("timestamp_micros", now)),\
          "params":{"session_id":\(pick("session_id", "1")),"value":\(pick("value", "1"))}}]}
          """
        for path in ["/mp/collect", "/debug/mp/collect"] {
          let answer = try await Self.execute(
            client, "\(path)?firebase_app_id=1:1:ios:a&api_secret=\(writeKey)", method: .post, key: nil,
            body: Array(body.utf8))
          #expect((200..<500).contains(answer.status), "\(path) \(field)=\(number): \(answer)")
        }
      }
      try await Self.expectHealthy(client)
    }
    let stored = try await collector.store.events(app: "ty", limit: 1_000)
    #expect(stored.allSatisfy { CollectorLimits.validTimes.contains($0.occurredAt) })
  }
}

extension HostileInputTests {
  @Test("a key in the URL keeps its `+` (clients leave it unencoded); `%2B` reads the same")
  func plusInAKey() async throws {
    let collector = try await makeCollector()
    let key = "plus+key+0123456789"
    try await collector.keyRing.provision([ProvisionedKey(app: "ty", key: key, scope: .write)], now: 0)
    let payload = Array(
      #"{"device_id":"d","app_name":"Shop","items":[{"description":"Opened","timestamp":"2026-11-20T10:00:00Z"}],"counters":[]}"#
        .utf8)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for written in ["plus+key+0123456789", "plus%2Bkey%2B0123456789"] {
        let answer = try await Self.execute(
          client, "/v1/simple-analytics?key=\(written)", method: .post, key: nil, body: payload)
        #expect(answer.status == 200, "\(written): \(answer.text)")
      }
    }
  }
}

extension HostileInputTests {
  /// On PostgreSQL a NUL anywhere in an event's text would fail the whole group commit (503 for every
  /// request in it, retried forever): the event is rejected alone on every route.
  @Test(
    "a NUL in an event's text rejects that event alone, on every route and engine",
    arguments: LiveTests.Engine.available)
  func nulInEvents(engine: LiveTests.Engine) async throws {
    let collector = try await makeCollector { engine.store($0, "nul") }
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var bad = Batches.event("nul-1")
      bad.parameters["note"] = .string("a\u{0}b")
      var badUser = Batches.event("nul-2")
      badUser.userId = "u\u{0}"
      var badItem = Batches.event("nul-3")
      badItem.parameters["items"] = .array([
        .object(["item_id": .string("ok")]), .object(["item_id": .string("a\u{0}")]),
      ])
      let native = try await Self.execute(
        client, "/v1/batch", method: .post, key: writeKey,
        body: Batches.body([bad, badUser, badItem, Batches.event("ok-1")]))
      #expect(native.status == 200, "\(native.text)")
      #expect(native.text.contains(#""accepted":1"#), "\(native.text)")
      #expect(native.text.contains(#"events[2].parameters.items[1].item_id"#), "\(native.text)")
      let now = Batches.now / 1000
      let mixpanel = """
        [{"event":"ok","properties":{"distinct_id":"d","time":\(now),"$insert_id":"ok-2"}},\
        {"event":"bad","properties":{"distinct_id":"d","time":\(now),"$insert_id":"bad-2","note":"a\\u0000b"}}]
        """
      let answer = try await Self.execute(
        client, "/import?strict=1", method: .post, key: nil, body: Array(mixpanel.utf8),
        headers: [.authorization: "Basic " + Data("\(writeKey):".utf8).base64EncodedString()])
      #expect((200..<500).contains(answer.status), "\(answer)")
      let ga4 = """
        {"app_instance_id":"a1b2","events":[{"name":"ok_3","params":{"session_id":1}},\
        {"name":"bad_3","params":{"note":"a\\u0000b"}},\
        {"name":"bad_4","params":{"currency":"TRY","items":[{"item_id":"a\\u0000b"}]}}]}
        """
      let collect = try await Self.execute(
        client, "/mp/collect?firebase_app_id=1:1:ios:a&api_secret=\(writeKey)", method: .post, key: nil,
        body: Array(ga4.utf8))
      #expect((200..<300).contains(collect.status), "\(collect)")
      let simple = """
        {"device_id":"sa","app_name":"Shop","items":[{"description":"Opened","timestamp":"2026-11-20T10:00:00Z"},\
        {"description":"Bad","timestamp":"2026-11-20T10:00:00Z","parameters":{"p":"a\\u0000b"}}],"counters":[]}
        """
      let sa = try await Self.execute(
        client, "/v1/simple-analytics?key=\(writeKey)", method: .post, key: nil, body: Array(simple.utf8))
      // The bad item is quarantined with its reason; the request is answered 2xx (its client deletes
      // what a 2xx answered, and nothing is lost).
      #expect(
        sa.status == 200 && sa.text.contains("quarantined 1") && sa.text.contains("items[1].parameters"), "\(sa.text)")
      try await Self.expectHealthy(client)
    }
    let names = Set(try await collector.store.events(app: "ty", limit: 100).map(\.name))
    #expect(names == ["product_viewed", "ok", "ok_3", "Opened"])
    try await collector.store.close()
  }
}
