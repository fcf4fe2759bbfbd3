import CollectorClickHouse
import CollectorPostgres
import CollectorReports
import CollectorSQLite
import CollectorStore
import Foundation

/// Report latency on generated data: for each size, each engine (SQLite; PostgreSQL when
/// `REPORT_BENCHMARK_POSTGRES_URL` is set; ClickHouse when `REPORT_BENCHMARK_CLICKHOUSE_URL` is) and
/// each dashboard report, the p50 of 5 runs, in one run (active users, retention and the funnel in
/// people, the default, and again with `unit=device`). The SQL stores are timed reading the events
/// and reading their rollups; ClickHouse has no rollups (one figure). Every engine's answers are
/// compared with SQLite's at the same size (or the first engine's), so the figures are of equal work.
///
/// ```
/// swift run -c release --package-path Tools/Benchmarks ReportBenchmark 1000000 10000000
/// REPORT_BENCHMARK_REPORTS="revenue,top-items" swift run -c release --package-path Tools/Benchmarks ReportBenchmark 1000000
/// REPORT_BENCHMARK_RUNS=1 REPORT_BENCHMARK_REPORTS="funnel (3 steps in 1 h)" swift run -c release --package-path Tools/Benchmarks ReportBenchmark 1000000
/// REPORT_BENCHMARK_TZ=Europe/Berlin swift run -c release --package-path Tools/Benchmarks ReportBenchmark 1000000
/// REPORT_BENCHMARK_ENGINES=clickhouse REPORT_BENCHMARK_CLICKHOUSE_URL=http://127.0.0.1:8123 \
///   swift run -c release --package-path Tools/Benchmarks ReportBenchmark 100000000
/// REPORT_BENCHMARK_ENGINES=clickhouse-shards REPORT_BENCHMARK_CLICKHOUSE_SHARD_URLS=$COLLECTOR_TEST_CLICKHOUSE_SHARD_URLS \
///   swift run -c release --package-path Tools/Benchmarks ReportBenchmark 10000000
/// ```
///
/// The data is generated inside the database by `INSERT … SELECT` (the same rows on every engine),
/// then the SQL stores' rollups are rebuilt from it: 4 weeks, 20 events per session, one device per
/// 100 events, 9 event names in a skewed mix, 2 platforms, 4 app versions (devices upgrade mid-way),
/// 3 OS versions, a product id parameter; purchases (3 %) and refunds (1 %) carry an order (a
/// transaction id, TRY or EUR, a value; purchases two items). The SQL stores run sizes up to
/// 10,000,000 (past that is ClickHouse's ground; `REPORT_BENCHMARK_SQL_MAX` changes it);
/// `REPORT_BENCHMARK_ENGINES=sqlite,postgres,clickhouse,clickhouse-shards` picks engines among those
/// configured; `clickhouse-shards` is a cluster (`REPORT_BENCHMARK_CLICKHOUSE_SHARD_URLS`, every
/// shard's URL; `REPORT_BENCHMARK_CLICKHOUSE_CLUSTER`, default `coretracker_shards` as `.ci/clickhouse`
/// names it), its rows sharded by device through its `Distributed` tables.
@main
enum ReportBenchmark {
  static let start = ReportTime.parse("2026-10-05")!
  static let day: Int64 = 86_400_000
  static let environment = ProcessInfo.processInfo.environment
  /// Runs per report (the p50 is reported): 5, or `REPORT_BENCHMARK_RUNS` (1 for a report of minutes).
  static let runs = environment["REPORT_BENCHMARK_RUNS"].flatMap { Int($0) }.map { max(1, $0) } ?? 5

  static func main() async throws {
    let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0.replacingOccurrences(of: "_", with: "")) }
    guard !sizes.isEmpty, sizes.allSatisfy({ (1_000...1_000_000_000).contains($0) && $0 % 20 == 0 }) else {
      FileHandle.standardError.write(
        Data("usage: ReportBenchmark SIZE... (event counts from 1,000 to 10^9, multiples of 20)\n".utf8))
      exit(2)
    }
    // `REPORT_BENCHMARK_REPORTS=revenue,top-items` times only the reports named (as in the table).
    let only = environment["REPORT_BENCHMARK_REPORTS"].map(reportNames)
    if let unknown = only?.subtracting(reports.map(\.0)), !unknown.isEmpty {
      FileHandle.standardError.write(
        Data("REPORT_BENCHMARK_REPORTS: no report named \(unknown.sorted()); the reports: \(reports.map(\.0))\n".utf8))
      exit(2)
    }
    // With `REPORT_BENCHMARK_REUSE` the SQLite files live in a folder that outlives the process.
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      environment["REPORT_BENCHMARK_REUSE"] != nil ? "report-benchmark-kept" : "report-benchmark-\(getpid())")
    // `REPORT_BENCHMARK_KEEP=1` keeps the databases (the SQLite folder, the PostgreSQL schemas, the
    // ClickHouse databases) for looking at query plans by hand; so does `REPORT_BENCHMARK_REUSE`, which
    // is for timing them again (a reused 100M database takes minutes to load again).
    let keep = environment["REPORT_BENCHMARK_KEEP"] != nil || environment["REPORT_BENCHMARK_REUSE"] != nil
    defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
    var table: [[String]] = []
    for size in sizes {
      var answers: [String: String] = [:]
      for engine in try Engine.configured(size: size, folder: folder) {
        let loading = Date()
        try await engine.load(size)
        log("\(engine.name) \(size) events: loaded in " + String(format: "%.0f s", Date().timeIntervalSince(loading)))
        var differing: [String] = []
        for (name, run) in reports where only.map({ $0.contains(name) }) ?? true {
          var figures: [String] = []
          // `REPORT_BENCHMARK_BASELINE_MAX` (default 1,000,000): the largest size also timed from
          // the events (minutes per report on the SQL stores at 10M).
          let baseline = size <= environment["REPORT_BENCHMARK_BASELINE_MAX"].flatMap({ Int($0) }) ?? 1_000_000
          for reports in [baseline ? engine.fromEvents : nil, engine.served] {
            guard let reports else {
              figures.append("—")
              continue
            }
            var times: [Double] = []
            for _ in 0..<runs {
              let began = DispatchTime.now().uptimeNanoseconds
              let answer: String
              do {
                answer = try await run(reports)
              } catch {
                // A report the engine cannot answer (a server's memory limit) is a row, not the end.
                log("  \(name) failed: \(error)")
                times = []
                break
              }
              times.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1_000_000)
              if let first = answers[name], first != answer {
                if !differing.contains(name) { log("  \(name) differs: \(difference(first, answer))") }
                differing.append(name)
              } else {
                answers[name] = answer
              }
            }
            figures.append(times.isEmpty ? "failed" : String(format: "%.1f", times.sorted()[times.count / 2]))
          }
          let goal = engine.goal(size)
          let met = goal.map { (Double(figures[1]) ?? .infinity) <= $0 ? "yes" : "NO" } ?? "—"
          table.append([engine.name, "\(size)", name] + figures + [goal.map { "≤ \(Int($0))" } ?? "—", met])
          log("  \(name): \(figures[0]) ms from events, \(figures[1]) ms as served")
        }
        log("  answers equal the first engine's: " + (differing.isEmpty ? "yes" : "NO: \(Set(differing).sorted())"))
        try await engine.finish(keep: keep)
      }
    }
    print("| engine | events | report | p50 from events (ms) | p50 as served (ms) | goal (ms) | met |")
    print("|---|---:|---|---:|---:|---|---|")
    for row in table { print("| " + row.joined(separator: " | ") + " |") }
  }

  /// A report's answer as text, compared across engines: numbers with a fraction to 9 significant
  /// digits, since sums of money in another order differ in their last bits.
  static func answer(_ value: some Sendable) -> String {
    let text = String(describing: value)
    let numbers = try! NSRegularExpression(pattern: "-?[0-9]+\\.[0-9]+(e[-+]?[0-9]+)?")
    var result = ""
    var last = text.startIndex
    for match in numbers.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
      let range = Range(match.range, in: text)!
      result += text[last..<range.lowerBound] + String(format: "%.9g", Double(text[range]) ?? 0)
      last = range.upperBound
    }
    return result + text[last...]
  }

  /// Where two answers part: the text around the first character that differs, in each.
  static func difference(_ one: String, _ other: String) -> String {
    let same = zip(one, other).prefix { $0 == $1 }.count
    func around(_ text: String) -> Substring { text.dropFirst(max(0, same - 120)).prefix(240) }
    return "\n    \(around(one))\n    \(around(other))"
  }

  static func log(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

  /// The dashboard's reports over the four generated weeks (whole days, so rollups can answer);
  /// active users, retention and the funnel in people (the default) and in devices. In UTC, or in
  /// `REPORT_BENCHMARK_TZ` (`Europe/Berlin`: its DST change of 2026-10-25 is inside the weeks).
  /// The report names in `list`, split at the commas outside parentheses (`timeseries (hour, one
  /// event)` is one name).
  static func reportNames(_ list: String) -> Set<String> {
    var (names, name, depth) = ([String](), "", 0)
    for character in list {
      if character == ",", depth == 0 {
        names.append(name)
        name = ""
        continue
      }
      if character == "(" { depth += 1 }
      if character == ")" { depth -= 1 }
      name.append(character)
    }
    names.append(name)
    return Set(names.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
  }

  static let reports: [(String, @Sendable (any ReportEngine) async throws -> String)] = {
    let zone = try! environment["REPORT_BENCHMARK_TZ"].map { try ReportZone(identifier: $0) } ?? .utc
    let filter = try! ReportFilter(app: "bench", from: start, to: start + 28 * day, zone: zone)
    let devices = try! ReportFilter(app: "bench", from: start, to: start + 28 * day, unit: .device, zone: zone)
    let funnel = ["product_viewed", "add_to_cart", "purchase"]
    // Twenty steps, as the goal asks: the generated names are ten, so steps repeat (never two
    // neighbours alike): an open, nine screen-then-product views, a cart.
    let twenty =
      ["app_open"] + Array(repeating: ["screen_view", "product_viewed"], count: 9).joined() + ["add_to_cart"]
    return [
      ("overview", { ReportBenchmark.answer(try await $0.overview(filter)) }),
      ("top-events", { ReportBenchmark.answer(try await $0.topEvents(filter)) }),
      ("timeseries (day)", { ReportBenchmark.answer(try await $0.timeSeries(filter, bucket: .day)) }),
      (
        "timeseries (hour, one event)",
        { ReportBenchmark.answer(try await $0.timeSeries(filter, bucket: .hour, event: "purchase")) }
      ),
      ("active-devices", { ReportBenchmark.answer(try await $0.activeDevices(filter)) }),
      ("active-devices by device", { ReportBenchmark.answer(try await $0.activeDevices(devices)) }),
      ("retention (week)", { ReportBenchmark.answer(try await $0.retention(filter, period: .week)) }),
      ("retention (week) by device", { ReportBenchmark.answer(try await $0.retention(devices, period: .week)) }),
      ("breakdown (app version)", { ReportBenchmark.answer(try await $0.breakdown(filter, by: .appVersion)) }),
      ("sessions", { ReportBenchmark.answer(try await $0.sessions(filter)) }),
      (
        "parameter-values",
        { ReportBenchmark.answer(try await $0.parameterValues(filter, event: "purchase", parameter: "product_id")) }
      ),
      (
        "funnel (3 steps in 1 h)",
        { ReportBenchmark.answer(try await $0.funnel(filter, steps: funnel, window: 3_600_000)) }
      ),
      (
        "funnel (3 steps in 1 h) by device",
        { ReportBenchmark.answer(try await $0.funnel(devices, steps: funnel, window: 3_600_000)) }
      ),
      (
        "funnel (20 steps in 1 day)",
        { ReportBenchmark.answer(try await $0.funnel(filter, steps: twenty, window: 86_400_000)) }
      ),
      ("counters", { ReportBenchmark.answer(try await $0.counters(filter)) }),
      ("events (latest page)", { ReportBenchmark.answer(try await $0.eventRows(filter, event: nil, limit: 100)) }),
      ("revenue", { ReportBenchmark.answer(try await $0.revenue(filter)) }),
      ("top-items", { ReportBenchmark.answer(try await $0.topItems(filter)) }),
      (
        "top-items (one brand)",
        { ReportBenchmark.answer(try await $0.topItems(filter, category: nil, brand: "B7", limit: 50)) }
      ),
    ]
  }()

  /// Generates `size` events into `store` in steps of 1,000,000 (one statement each).
  static func load(_ size: Int, into store: any BulkLoading) async throws {
    // A 1 GB page cache on the writer: the secondary indexes take random inserts.
    let sqlite = store is SQLiteEventStore
    if sqlite { try await store.execute("PRAGMA cache_size = -1000000") }
    var done = 0
    while done < size {
      let end = min(size, done + 1_000_000)
      try await store.execute(insert(from: done, to: end, sqlite: sqlite, table: store.eventsTable))
      done = end
      log("  \(done)/\(size)")
    }
    try await store.execute(
      sqlite ? "ANALYZE" : "VACUUM ANALYZE \(store.eventsTable)")
  }

  /// One `INSERT … SELECT` of events `first..<end`; row `x` is session `x / 20`, and everything else
  /// follows from hashes of the session and of `x`, identically in SQLite and PostgreSQL.
  static func insert(from first: Int, to end: Int, sqlite: Bool, table: String) -> String {
    let sessions = "(x / 20)"
    let devices = max(1, (end > 0 ? end : 1) / 100)
    // Devices and days from multiplicative hashes of the session (fits in 64 bits below 2^31 sessions).
    let device = "((\(sessions) * 2654435761) % \(max(1, devices)))"
    let dayOf = "(((\(sessions) * 40503) % 1000003) % 28)"
    let hourOf = "(((\(sessions) * 7919) % 104729) % 24)"
    let time =
      "(\(start) + \(dayOf) * \(day) + \(hourOf) * 3600000 + ((\(sessions) * 31) % 1800000) + (x % 20) * 30000)"
    let pick = "((x * 2654435761 + \(sessions)) % 100)"
    let name = """
      (CASE WHEN x % 20 = 0 THEN 'app_open' WHEN \(pick) < 40 THEN 'screen_view' WHEN \(pick) < 62 THEN 'product_viewed' \
      WHEN \(pick) < 72 THEN 'search' WHEN \(pick) < 82 THEN 'add_to_cart' WHEN \(pick) < 88 THEN 'favorite' \
      WHEN \(pick) < 93 THEN 'checkout' WHEN \(pick) < 96 THEN 'purchase' WHEN \(pick) < 97 THEN 'refund' \
      ELSE 'share' END)
      """
    // Purchases and refunds carry an order: a transaction id, TRY or EUR, a value and (purchases)
    // two items of 500 products, 20 brands and 12 categories; every other event a product id.
    let product = "'\"product_id\":\"p' || ((x * 7) % 500) || '\"'"
    let order =
      "'\"transaction_id\":\"T' || (x / 3) || '\",\"currency\":\"' || (CASE WHEN x % 10 = 0 THEN 'EUR' ELSE 'TRY' END) "
      + "|| '\",\"value\":' || (x % 997) || '.5'"
    let items =
      "'\"items\":[{\"item_id\":\"p' || ((x * 7) % 500) || '\",\"item_name\":\"Product ' || ((x * 7) % 500) "
      + "|| '\",\"item_brand\":\"B' || (x % 20) || '\",\"item_category\":\"C' || (x % 12) || '\",\"price\":' "
      + "|| (x % 97) || '.5,\"quantity\":' || (1 + x % 3) || '},{\"item_id\":\"p' || ((x * 11) % 500) "
      + "|| '\",\"price\":9.99,\"quantity\":1}]'"
    let parameters =
      "'{' || \(product) || (CASE \(name) WHEN 'purchase' THEN ',' || \(order) || ',' || \(items) "
      + "WHEN 'refund' THEN ',' || \(order) ELSE '' END) || '}'"
    let platform = "(CASE WHEN \(device) % 2 = 0 THEN 'iOS' ELSE 'Android' END)"
    let version =
      "(CASE WHEN \(dayOf) < 14 + \(device) % 7 THEN (CASE WHEN \(device) % 3 = 0 THEN '9.8' ELSE '9.9' END) "
      + "WHEN \(device) % 5 = 0 THEN '10.0-beta' ELSE '10.0' END)"
    let os =
      "(CASE WHEN \(device) % 2 = 0 THEN (CASE WHEN \(device) % 3 = 0 THEN '17.4' ELSE '18.1' END) ELSE '14' END)"
    // Two devices in five are signed in for three events in four (an anonymous prefix and gaps);
    // devices 2k and 2k+1 are one person's when both are: people are fewer than devices.
    let user = "(CASE WHEN \(device) % 5 < 2 AND x % 4 <> 0 THEN 'user-' || (\(device) / 2) END)"
    let occurred = sqlite ? "t" : "to_timestamp(t / 1000.0)"
    // PostgreSQL keeps the text as sent beside the jsonb where jsonb would reorder it, as the collector
    // does (PostgresParameterText): here the purchases' and refunds' (several keys, not in jsonb's
    // order); a product id alone keeps its order.
    let json = sqlite ? "p" : "p::jsonb, CASE WHEN \(name) IN ('purchase', 'refund') THEN p END"
    let columns = """
      app, event_id, name, kind, occurred_at, utc_offset_minutes, received_at, device_id, user_id, session_id, app_name,
      app_version, app_build, os_name, os_version, platform, device_model, locale, library_name, library_version, parameters
      """ + (sqlite ? "" : ", parameters_as_sent")
    let rows = """
      SELECT 'bench', 'e-' || (1000000000 + x), \(name), 'action', \(occurred), 0, \(occurred), 'device-' || \(device), \(user), \(sessions),
        'Bench', \(version), '1', \(platform), \(os), \(platform), 'Model', 'en', 'CoreTracker', '1.0.0', \(json)
      FROM (SELECT x, \(time) AS t, \(parameters) AS p FROM numbers) g
      """
    if sqlite {
      return """
        WITH RECURSIVE numbers(x) AS (SELECT \(first) UNION ALL SELECT x + 1 FROM numbers WHERE x < \(end - 1))
        INSERT INTO \(table) (\(columns)) \(rows)
        """
    } else {
      return """
        INSERT INTO \(table) (\(columns))
        \(rows.replacingOccurrences(of: "FROM numbers", with: "FROM generate_series(\(first)::bigint, \(end - 1)::bigint) AS numbers(x)"))
        """
    }
  }
}
