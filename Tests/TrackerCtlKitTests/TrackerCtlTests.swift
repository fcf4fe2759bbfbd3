import CollectorIngest
import CollectorReports
import CollectorRuntime
import CollectorSQLite
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import TestSupport
import Testing
import TrackerCtlKit

private let day: Int64 = 86_400_000
private let start = ReportTime.parse("2026-11-02")!

/// A SQLite store with `count` events of app `shop` on 2026-11-02: every third one `purchase`.
private func store(events count: Int) async throws -> SQLiteEventStore {
  let path = TestFiles.unique("ctl")
    .appendingPathComponent("collector.sqlite").path
  let store = try SQLiteEventStore(path: path, durability: .normal)
  try await store.migrate()
  let context = EventContext([
    .appVersion: "1.0", .osName: "iOS", .osVersion: "17.4", .platform: "iOS", .locale: "tr_TR",
    .deviceModel: "iPhone15,2",
  ])
  let events = (0..<count).map { (index: Int) -> StoredEvent in
    let user: String? = index % 2 == 0 ? "user-\(index % 5)" : nil
    return StoredEvent(
      app: "shop", eventID: String(format: "e%05d", index), name: index % 3 == 0 ? "purchase" : "product_viewed",
      kind: "action", occurredAt: start + Int64(index) * 1_000, utcOffsetMinutes: 0,
      receivedAt: start + Int64(index) * 1_000, deviceID: "device-\(index % 4)",
      userID: user, sessionID: Int64(index / 100), context: context,
      parametersJSON: #"{"index":\#(index),"note":"a, \"quoted\" note"}"#)
  }
  _ = try await store.write(StoreBatch(events: events))
  return store
}

private let range = ["app": "shop", "from": "2026-11-02", "to": "2026-11-03"]

/// Runs `body` with the base URL of a collector on 127.0.0.1 over `store`, with `key` provisioned.
private func withLiveCollector(
  _ store: SQLiteEventStore, key: ProvisionedKey, zones: [String: ReportZone] = [:],
  _ body: @escaping @Sendable (URL) async throws -> Void
) async throws {
  var configuration = CollectorConfiguration()
  configuration.port = 0
  configuration.zones = zones
  // The fixtures are dated (2026-11-02): the quarantine's 30-day retention, which prunes at start by
  // the wall clock, would delete them once that date is a month old.
  configuration.retention.quarantineDays = nil
  let collector = EventCollector(configuration: configuration, store: store, logger: Logger(label: "test"))
  try await collector.keyRing.provision([key], now: 0)
  try await collector.application(closesStore: false).test(.live) { client async throws in
    try await body(URL(string: "http://127.0.0.1:\(try #require(client.port))")!)
  }
}

@Suite("trackerctl")
struct TrackerCtlTests {
  @Test func tablesAlignAndNumbersSitRight() {
    let table = ReportTable(columns: ["event", "count"], rows: [["purchase", "12"], ["product_viewed", "3"]])
    #expect(
      table.text() == """
        event           count
        ──────────────  ─────
        purchase           12
        product_viewed      3

        """)
    #expect(TrackerCtl.progressBar(5, 10, width: 10) == "[#####-----]  50%  5/10")
  }

  @Test func reportsReadAStoreDirectlyAsTableJSONAndCSV() async throws {
    let store = try await store(events: 9)
    let origin = ReportOrigin.store(SQLReports(store: store))
    let table = try await TrackerCtl.report("top-events", parameters: range, origin: origin, format: .table)
    #expect(table.contains("product_viewed      6        4     66.7") && table.contains("purchase            3"))
    // The range the table covers heads it; the defaults (7 days before now) are settled and printed.
    #expect(table.hasPrefix("shop: 2026-11-02T00:00:00Z to 2026-11-03T00:00:00Z (UTC; the end not included)\n"))
    let byDefault = try await TrackerCtl.report(
      "top-events", parameters: ["app": "shop"], origin: origin, format: .table)
    #expect(byDefault.hasPrefix("shop: ") && byDefault.contains("(UTC; the end not included)"))
    let csv = try await TrackerCtl.report("top-events", parameters: range, origin: origin, format: .csv)
    #expect(csv.hasPrefix("event,count,devices,share %\r\nproduct_viewed,6,4,66.7\r\n"))
    let json = try await TrackerCtl.report("overview", parameters: range, origin: origin, format: .json)
    #expect(json.contains(#""events":9"#))
    // `--unit`: people unless told otherwise.
    let people = try await TrackerCtl.report("active-devices", parameters: range, origin: origin, format: .csv)
    #expect(people.hasPrefix("figure,people\r\n"))
    let devices = try await TrackerCtl.report(
      "active-devices", parameters: range.merging(["unit": "device"]) { $1 }, origin: origin, format: .csv)
    #expect(devices.hasPrefix("figure,devices\r\n"))
    await #expect(throws: FieldError.self) {
      try await TrackerCtl.report(
        "top-events", parameters: ["app": "shop", "from": "soon"], origin: origin, format: .table)
    }
    for command in ["report", "export"] {
      await #expect("\(command)") {
        let wrong = range.merging(["app": "Shop"]) { $1 }
        if command == "report" {
          _ = try await TrackerCtl.report("overview", parameters: wrong, origin: origin, format: .table)
        } else {
          try await TrackerCtl.export(parameters: wrong, origin: origin, format: .csv, to: { _ in })
        }
      } throws: { error in
        "\(error)" == "--app Shop: no events of that app (apps with events: shop)"
      }
    }
    try await store.close()
  }

  @Test func reportsOverHTTPMatchTheStore() async throws {
    let store = try await store(events: 30)
    let admin = "test-admin-key-trackerctl"
    try await withLiveCollector(store, key: ProvisionedKey(app: "*", key: admin, scope: .admin)) { url in
      for name in ["overview", "top-events", "breakdown", "sessions", "revenue", "top-items"] {
        let remote = try await TrackerCtl.report(name, parameters: range, origin: .http(url, key: admin), format: .csv)
        let local = try await TrackerCtl.report(
          name, parameters: range, origin: .store(SQLReports(store: store)), format: .csv)
        #expect(remote == local, "\(name)")
      }
      // A mistyped app: a usage error (exit status 1) naming the apps there are, not an empty table.
      await #expect {
        try await TrackerCtl.report(
          "top-events", parameters: range.merging(["app": "shpo"]) { $1 }, origin: .http(url, key: admin),
          format: .table)
      } throws: { error in
        (error as? CommandError)?.exitCode == 1
          && "\(error)" == "--app shpo: no events of that app (apps with events: shop)"
      }
      #expect(try await ReportOrigin.http(url, key: admin).apps().apps == ["shop"])
      // Refused by the collector: exit status 2, its answer quoted.
      await #expect {
        try await TrackerCtl.report("overview", parameters: range, origin: .http(url, key: "wrong"), format: .table)
      } throws: { error in
        (error as? CommandError)?.exitCode == 2 && "\(error)".contains("the collector answered 401")
      }
    }
    try await store.close()
  }

  /// Days are the app's configured zone's (read from `GET /v1/apps`), or `--tz`'s; the heading says
  /// which, with each end's offset.
  @Test func daysAreTheAppsZoneOrTheOneGiven() async throws {
    let store = try await store(events: 30)
    let origin = ReportOrigin.store(SQLReports(store: store))
    let local = try await TrackerCtl.report(
      "overview", parameters: range.merging(["tz": "Europe/Istanbul"]) { $1 }, origin: origin, format: .table)
    #expect(
      local.hasPrefix(
        "shop: 2026-11-02T00:00:00+03:00 to 2026-11-03T00:00:00+03:00 (Europe/Istanbul; the end not included)\n"))
    let admin = "test-admin-key-trackerctl"
    let istanbul = try ReportZone(identifier: "Europe/Istanbul")
    try await withLiveCollector(
      store, key: ProvisionedKey(app: "*", key: admin, scope: .admin), zones: ["shop": istanbul]
    ) {
      url in
      let remote = try await TrackerCtl.report(
        "overview", parameters: range, origin: .http(url, key: admin), format: .table)
      #expect(remote == local)
      #expect(try await ReportOrigin.http(url, key: admin).apps().timeZones == ["shop": "Europe/Istanbul"])
      let utc = try await TrackerCtl.report(
        "overview", parameters: range.merging(["tz": "UTC"]) { $1 }, origin: .http(url, key: admin), format: .table)
      #expect(utc.hasPrefix("shop: 2026-11-02T00:00:00Z to 2026-11-03T00:00:00Z (UTC; the end not included)\n"))
    }
    try await store.close()
  }

  @Test func theQuarantineIsListedCountedReplayedAndPurgedOverHTTP() async throws {
    let store = try await store(events: 0)
    let admin = "test-admin-key-trackerctl"
    let held = QuarantinedEntry(
      id: "q-1", app: "shop", route: "batch", receivedAt: start, entry: "{}", reasons: ["events[0].name: is required"])
    _ = try await store.write(StoreBatch(quarantined: [held]))
    try await withLiveCollector(store, key: ProvisionedKey(app: "*", key: admin, scope: .admin)) { url in
      let client = QuarantineClient(base: url, key: admin)
      let listed = try await client.list(app: "shop", limit: 10)
      #expect(listed.map(\.id) == ["q-1"] && listed.first?.reasons == held.reasons)
      #expect(QuarantineClient.table(listed).text().contains("events[0].name: is required"))
      let counts = try await client.counts(app: nil)
      #expect(counts.rows == [["shop", "batch", "name: is required", "1"]])
      // `{}` is no batch: still refused, with today's reason.
      let (stored, kept) = try await client.replay(app: "shop")
      #expect(stored == 0 && kept == 1)
      #expect(try await client.list(app: "shop", limit: 10).first?.reasons.first?.contains("context") == true)
      #expect(try await client.purge(app: "shop", before: "2999-01-01") == 1)
      await #expect(throws: CommandError.self) {
        try await QuarantineClient(base: url, key: "wrong").list(app: nil, limit: 1)
      }
    }
    #expect(QueryText.encode(["event": "a+b c&d"]) == "event=a%2Bb%20c%26d")
    try await store.close()
  }

  @Test func clientDropsAreReadOverHTTP() async throws {
    let store = try await store(events: 0)
    let reader = "test-read-key-trackerctl"
    let line = StoredClientDrop(
      app: "shop", reportID: "r-1", service: "", reason: "disk_budget", count: 1_100, deviceID: "d-1",
      appName: "Shop", appVersion: "1.0", platform: "iOS", reportedAt: start, receivedAt: start)
    _ = try await store.write(StoreBatch(clientDrops: [line]))
    try await withLiveCollector(store, key: ProvisionedKey(app: "*", key: reader, scope: .read)) { url in
      let drops = try await QuarantineClient(base: url, key: reader).clientDrops(
        app: "shop", from: String(start - 86_400_000), to: String(start + 86_400_000), appName: nil)
      #expect(drops.summary == "1 device reported 1,100 events dropped: disk_budget 1,100")
      #expect(drops.table.rows == [["(tracker)", "disk_budget", "1100", "1"]])
    }
    try await store.close()
  }

  /// Reading never changes a store: a store behind this version is refused with what to do, not
  /// migrated; a command that writes migrates it.
  @Test func readingChecksTheSchemaAndNeverMigrates() async throws {
    let directory = TemporaryDirectory()
    try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
    let path = directory.url.appendingPathComponent("old.sqlite").path
    let unmigrated = try SQLiteEventStore(path: path, durability: .normal)
    #expect(try await unmigrated.schemaVersion() == 0)
    try await unmigrated.close()
    await #expect(throws: StoreError.schemaTooOld(found: 0, known: unmigrated.knownSchemaVersion)) {
      try await Stores.open(SQLiteStorage(path: path))
    }
    let reopened = try SQLiteEventStore(path: path, durability: .normal)
    #expect(try await reopened.schemaVersion() == 0, "reading left it as it was")
    try await reopened.close()
    let writer = try await Stores.open(SQLiteStorage(path: path), migrating: true).store
    try await writer.close()
    let reader = try await Stores.open(SQLiteStorage(path: path)).store
    #expect(try await reader.schemaVersion() == reader.knownSchemaVersion)
    try await reader.close()
  }

  @Test func keysAreCreatedListedAndRevoked() async throws {
    let store = try await store(events: 0)
    let key = try await TrackerCtl.createKey(app: "shop", scope: .write, store: store)
    #expect(key.hasPrefix("ctw_") && key.count == 36)
    let admin = try await TrackerCtl.createKey(app: "ignored", scope: .admin, store: store)
    #expect(admin.hasPrefix("cta_"))
    let list = try await TrackerCtl.listKeys(store: store)
    #expect(list.rows.map { $0[1] }.sorted() == ["*", "shop"])
    #expect(!list.text().contains(key))  // the key itself is never shown again
    let id = try #require(list.rows.first { $0[1] == "shop" }?[0])
    try await TrackerCtl.revokeKey(id: id, store: store)
    #expect(try await TrackerCtl.listKeys(store: store).rows.first { $0[0] == id }?[4].isEmpty == false)
    await #expect(throws: CommandError.self) { try await TrackerCtl.revokeKey(id: "nope", store: store) }
    try await store.close()
  }

  @Test(arguments: [TrackerCtl.Format.json, .csv])
  func exportWritesEveryEventOnceAcrossPages(format: TrackerCtl.Format) async throws {
    let store = try await store(events: 2_500)
    var text = ""
    var seen: [(Int, Int)] = []
    let written = try await TrackerCtl.export(
      parameters: range, origin: .store(SQLReports(store: store)), format: format, to: { text += $0 },
      progress: { seen.append(($0, $1)) })
    #expect(written == 2_500)
    #expect(seen.map(\.0) == [1_000, 2_000, 2_500] && seen.allSatisfy { $0.1 == 2_500 })
    let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
    if format == .csv {
      #expect(lines.count == 2_501 && lines[0].hasPrefix("time,event,kind,event id,device,user,session"))
      #expect(lines[0].contains("locale") && lines[0].contains("device_model"), "every stored field: \(lines[0])")
      #expect(lines[1].contains(",e02499,device-3,,24,") && lines[2].contains(",e02498,device-2,user-3,24,"))
      #expect(lines.filter { $0.hasPrefix("time,") }.count == 1)
    } else {
      #expect(lines.count == 2_500)
      let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
      #expect(first?["eventId"] as? String == "e02499")
      #expect(first?["sessionId"] as? Int == 24 && first?["userId"] == nil && first?["kind"] as? String == "action")
      #expect((first?["context"] as? [String: String])?["locale"] == "tr_TR")
      #expect((first?["context"] as? [String: String])?["deviceModel"] == "iPhone15,2")
      let second = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any]
      #expect(second?["userId"] as? String == "user-3")
      #expect((first?["parameters"] as? [String: Any])?["note"] as? String == "a, \"quoted\" note")
      #expect((first?["parameters"] as? [String: Any])?["index"] as? Int == 2_499)
      let ids = Set(
        lines.compactMap { line in
          (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["eventId"] as? String
        })
      #expect(ids.count == 2_500)
    }
    try await store.close()
  }
}

@Suite("trackerctl tail and load")
struct TailAndLoadTests {
  private func event(_ id: String, at time: Int64, name: String = "product_viewed") -> StoredEvent {
    StoredEvent(
      app: "shop", eventID: id, name: name, kind: "action", occurredAt: time, utcOffsetMinutes: 0, receivedAt: time,
      deviceID: "device-1", userID: nil, sessionID: 1,
      context: EventContext([.appVersion: "1.0", .osName: "iOS", .osVersion: "17.4", .platform: "iOS"]),
      parametersJSON: #"{"id":"\#(id)"}"#)
  }

  @Test func tailPrintsEachNewEventOnceOldestFirst() async throws {
    let store = try await store(events: 0)
    let now = start + 3_600_000
    var tail = try Tail(
      origin: .store(SQLReports(store: store)), parameters: ["app": "shop"], lookback: 600_000, now: { now })
    #expect(try await tail.poll().isEmpty)
    _ = try await store.write(StoreBatch(events: [event("b", at: now - 2_000), event("a", at: now - 5_000)]))
    #expect(try await tail.poll().map(\.eventID) == ["a", "b"])
    #expect(try await tail.poll().isEmpty)
    // New arrivals, one of them in the same millisecond as one already printed, one from a fast clock;
    // one that occurred before the look-back window is left to the reports.
    _ = try await store.write(
      StoreBatch(events: [
        event("c", at: now - 2_000), event("d", at: now + 30_000), event("late", at: now - 1_200_000),
      ]))
    let rows = try await tail.poll()
    #expect(rows.map(\.eventID) == ["c", "d"])
    #expect(Tail.line(rows[0]).hasPrefix("2026-11-02T00:59:58Z  product_viewed  device-1  iOS 1.0  "))
    #expect(try Tail.json(rows[0]).contains(#""eventId":"c""#))
    #expect(throws: CommandError.self) { try Tail(origin: .store(SQLReports(store: store)), parameters: [:]) }
    try await store.close()
  }

  @Test func loadSendsEveryEventAndSummarises() async throws {
    let store = try await store(events: 0)
    let key = "test-write-key-for-load-generator"
    try await withLiveCollector(store, key: ProvisionedKey(app: "load", key: key, scope: .write)) { url in
      let plan = try LoadGenerator.Plan(events: 2_050, batchSize: 100, concurrency: 4, devices: 50)
      let progress = Progress()
      let summary = try await LoadGenerator(url: url, key: key, plan: plan).run { done, _ in progress.add(done) }
      #expect(summary.accepted == 2_050 && summary.requests == 21 && summary.failures.isEmpty)
      #expect(
        summary.p50 > 0 && summary.p50 <= summary.p90 && summary.p90 <= summary.p99 && summary.p99 <= summary.maximum)
      #expect(summary.text.contains("2050 events accepted"))
      #expect(progress.values.max() == 2_050)
      #expect(try await store.eventCount(app: "load") == 2_050)
      let devices = try await SQLReports(store: store).overview(
        try ReportFilter(app: "load", from: start, to: Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000))
      #expect(devices.current.devices == 50)

      let refused = try await LoadGenerator(
        url: url, key: "not-a-key", plan: try LoadGenerator.Plan(events: 300, batchSize: 100, concurrency: 2)
      ).run()
      #expect(refused.accepted == 0 && refused.failures == [401: 3])
      #expect(refused.text.contains("3 × HTTP 401"))
    }
    #expect(throws: CommandError.self) { try LoadGenerator.Plan(batchSize: 501) }
    try await store.close()
  }
}

/// Progress reports seen (from several tasks).
private final class Progress: @unchecked Sendable {
  private let lock = NSLock()
  private var seen: [Int] = []
  func add(_ value: Int) { lock.withLock { seen.append(value) } }
  var values: [Int] { lock.withLock { seen } }
}

/// The place `trackerctl` reads is one place, checked before anything is opened or sent.
@Suite("trackerctl's origin")
struct OriginChoiceTests {
  /// Nothing listening: exit status 3, said in words, not Foundation's error text.
  @Test func anUnreachableCollectorIsSaidSoWithExitStatus3() async {
    let nowhere = URL(string: "http://127.0.0.1:1")!
    await #expect {
      try await TrackerCtl.report("overview", parameters: range, origin: .http(nowhere, key: "k"), format: .table)
    } throws: { error in
      let text = "\(error)"
      return (error as? CommandError)?.exitCode == 3 && text.contains("cannot reach the collector at 127.0.0.1:1")
        && !text.contains("NSURLError") && !text.contains("Error Domain")
    }
  }

  @Test(arguments: [
    ("http://127.0.0.1:8080", nil, nil, "collector"), ("https://collector.example", nil, nil, "collector"),
    (nil, "/tmp/c.sqlite", nil, "store"), (nil, nil, "http://127.0.0.1:8123", "store"), (nil, nil, nil, "none"),
  ])
  func onePlaceIsChosen(url: String?, sqlite: String?, clickhouse: String?, expected: String) throws {
    let choice = try OriginChoice.choose(url: url, sqlite: sqlite, postgresURL: nil, clickhouseURL: clickhouse)
    switch choice {
    case .collector(let base): #expect(expected == "collector" && base.absoluteString == url)
    case .store: #expect(expected == "store")
    case .none: #expect(expected == "none")
    }
  }

  /// Two places are a usage error naming both, never a silent pick; a URL that is not http(s) with a
  /// host is refused with the form expected (an `ftp://` URL used to hang).
  @Test(
    arguments: [
      ("http://127.0.0.1:8080", "/tmp/c.sqlite", nil, "not --url and --sqlite"),
      (nil, "/tmp/c.sqlite", "http://127.0.0.1:8123", "not --sqlite and --clickhouse-url"),
      ("ftp://127.0.0.1/x", nil, nil, "--url must be an http:// or https:// URL"),
      ("127.0.0.1:8080", nil, nil, "--url must be an http:// or https:// URL"),
      ("http://", nil, nil, "--url must be an http:// or https:// URL"),
      (nil, nil, "clickhouse:9000", "--clickhouse-url must be an http:// or https:// URL"),
    ] as [(String?, String?, String?, String)])
  func anythingElseIsAUsageError(url: String?, sqlite: String?, clickhouse: String?, message: String) {
    #expect {
      try OriginChoice.choose(url: url, sqlite: sqlite, postgresURL: nil, clickhouseURL: clickhouse)
    } throws: { error in
      "\(error)".contains(message)
    }
  }
}
