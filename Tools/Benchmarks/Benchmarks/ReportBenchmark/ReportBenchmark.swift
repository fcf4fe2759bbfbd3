import CollectorPostgres
import CollectorReports
import CollectorSQLite
import CollectorStore
import Foundation

/// Report latency on generated data: for each size, each store (SQLite; PostgreSQL when
/// `REPORT_BENCHMARK_POSTGRES_URL` is set) and each dashboard report, the p50 of 5 runs read from
/// the events and read from the rollups, in one run.
///
/// ```
/// swift run -c release --package-path Tools/Benchmarks ReportBenchmark 1000000 10000000
/// REPORT_BENCHMARK_REPORTS="revenue,top-items" swift run -c release --package-path Tools/Benchmarks ReportBenchmark 1000000
/// ```
///
/// The data is generated inside the database by one `INSERT … SELECT` (the same rows on both
/// stores), then the rollups are rebuilt from it: 4 weeks, 20 events per session, one device per
/// 100 events, 9 event names in a skewed mix, 2 platforms, 4 app versions (devices upgrade mid-way),
/// 3 OS versions, a product id parameter; purchases (3 %) and refunds (1 %) carry an order (a
/// transaction id, TRY or EUR, a value; purchases two items).
@main
enum ReportBenchmark {
  static let start = ReportTime.parse("2026-10-05")!
  static let day: Int64 = 86_400_000
  static let runs = 5

  static func main() async throws {
    let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0.replacingOccurrences(of: "_", with: "")) }
    guard !sizes.isEmpty, sizes.allSatisfy({ $0 >= 1_000 && $0 % 20 == 0 }) else {
      FileHandle.standardError.write(Data("usage: ReportBenchmark SIZE... (event counts, multiples of 20)\n".utf8))
      exit(2)
    }
    let postgres = ProcessInfo.processInfo.environment["REPORT_BENCHMARK_POSTGRES_URL"]
    // `REPORT_BENCHMARK_REPORTS=revenue,top-items` times only the reports named (as in the table).
    let only = ProcessInfo.processInfo.environment["REPORT_BENCHMARK_REPORTS"].map {
      Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("report-benchmark-\(getpid())")
    // `REPORT_BENCHMARK_KEEP=1` keeps the databases (the SQLite folder, the PostgreSQL schemas) for
    // looking at query plans by hand.
    let keep = ProcessInfo.processInfo.environment["REPORT_BENCHMARK_KEEP"] != nil
    defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
    var table: [[String]] = []
    for size in sizes {
      var stores: [(String, any EventStore & BulkLoading)] = [
        (
          "SQLite",
          try SQLiteEventStore(path: folder.appendingPathComponent("\(size).sqlite").path, durability: .normal)
        )
      ]
      if let postgres {
        stores.append(("PostgreSQL", try PostgresEventStore(url: postgres, schema: "report_benchmark_\(size)")))
      }
      for (engine, store) in stores {
        try await store.migrate()
        let loading = Date()
        try await load(size, into: store)
        let rows = try await store.rebuildRollups()
        log(
          "\(engine) \(size) events: loaded and rolled up (\(rows) rollup rows) in "
            + String(format: "%.0f s", Date().timeIntervalSince(loading)))
        for (name, run) in reports where only.map({ $0.contains(name) }) ?? true {
          var figures: [String] = []
          for rollups in [false, true] {
            let reports = Reports(store: store, rollups: rollups)
            var times: [Double] = []
            for _ in 0..<runs {
              let began = DispatchTime.now().uptimeNanoseconds
              try await run(reports)
              times.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1_000_000)
            }
            figures.append(String(format: "%.1f", times.sorted()[runs / 2]))
          }
          let goal: Double = size <= 1_000_000 ? 200 : 1_000
          let met = (Double(figures[1]) ?? .infinity) <= goal ? "yes" : "NO"
          table.append([engine, "\(size)", name, figures[0], figures[1], met])
          log("  \(name): \(figures[0]) ms from events, \(figures[1]) ms with rollups")
        }
        if keep {
          log("  kept: \(engine == "PostgreSQL" ? "schema report_benchmark_\(size)" : folder.path)")
        } else if engine == "PostgreSQL" {
          try await store.execute("DROP SCHEMA report_benchmark_\(size) CASCADE")
        }
        try await store.close()
      }
    }
    print("| store | events | report | p50 from events (ms) | p50 with rollups (ms) | goal met |")
    print("|---|---:|---|---:|---:|---|")
    for row in table { print("| " + row.joined(separator: " | ") + " |") }
  }

  static func log(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

  /// The dashboard's reports over the four generated weeks (whole days, so rollups can answer).
  static let reports: [(String, @Sendable (Reports) async throws -> Void)] = {
    let filter = try! ReportFilter(app: "bench", from: start, to: start + 28 * day)
    return [
      ("overview", { _ = try await $0.overview(filter) }),
      ("top-events", { _ = try await $0.topEvents(filter) }),
      ("timeseries (day)", { _ = try await $0.timeSeries(filter, bucket: .day) }),
      ("timeseries (hour, one event)", { _ = try await $0.timeSeries(filter, bucket: .hour, event: "purchase") }),
      ("active-devices", { _ = try await $0.activeDevices(filter) }),
      ("retention (week)", { _ = try await $0.retention(filter, period: .week) }),
      ("breakdown (app version)", { _ = try await $0.breakdown(filter, by: .appVersion) }),
      ("sessions", { _ = try await $0.sessions(filter) }),
      (
        "parameter-values", { _ = try await $0.parameterValues(filter, event: "purchase", parameter: "product_id") }
      ),
      (
        "funnel (3 steps, 1 h)",
        {
          _ = try await $0.funnel(filter, steps: ["product_viewed", "add_to_cart", "purchase"], window: 3_600_000)
        }
      ),
      ("counters", { _ = try await $0.counters(filter) }),
      ("events (latest page)", { _ = try await $0.eventRows(filter, event: nil, limit: 100) }),
      ("revenue", { _ = try await $0.revenue(filter) }),
      ("top-items", { _ = try await $0.topItems(filter) }),
      ("top-items (one brand)", { _ = try await $0.topItems(filter, category: nil, brand: "B7", limit: 50) }),
    ]
  }()

  /// Generates `size` events into `store` in steps of 1,000,000 (one statement each).
  static func load(_ size: Int, into store: any BulkLoading) async throws {
    // A 1 GB page cache on the writer: the secondary indexes take random inserts.
    if store.dialect == .sqlite { try await store.execute("PRAGMA cache_size = -1000000") }
    var done = 0
    while done < size {
      let end = min(size, done + 1_000_000)
      try await store.execute(insert(from: done, to: end, dialect: store.dialect, table: store.eventsTable))
      done = end
      log("  \(done)/\(size)")
    }
    try await store.execute(
      store.dialect == .sqlite ? "ANALYZE" : "VACUUM ANALYZE \(store.eventsTable)")
  }

  /// One `INSERT … SELECT` of events `first..<end`; row `x` is session `x / 20`, and everything else
  /// follows from hashes of the session and of `x`, identically in both dialects.
  static func insert(from first: Int, to end: Int, dialect: SQLDialect, table: String) -> String {
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
    let occurred = dialect == .sqlite ? "t" : "to_timestamp(t / 1000.0)"
    let json = dialect == .sqlite ? "p" : "p::jsonb"
    let columns = """
      app, event_id, name, kind, occurred_at, utc_offset_minutes, received_at, device_id, user_id, session_id, app_name,
      app_version, app_build, os_name, os_version, platform, device_model, locale, library, parameters
      """
    let rows = """
      SELECT 'bench', 'e-' || (1000000000 + x), \(name), 'action', \(occurred), 0, \(occurred), 'device-' || \(device), NULL, \(sessions),
        'Bench', \(version), '1', \(platform), \(os), \(platform), 'Model', 'en', 'CoreTracker/1.0.0', \(json)
      FROM (SELECT x, \(time) AS t, \(parameters) AS p FROM numbers) g
      """
    switch dialect {
    case .sqlite:
      return """
        WITH RECURSIVE numbers(x) AS (SELECT \(first) UNION ALL SELECT x + 1 FROM numbers WHERE x < \(end - 1))
        INSERT INTO \(table) (\(columns)) \(rows)
        """
    case .postgres:
      return """
        INSERT INTO \(table) (\(columns))
        \(rows.replacingOccurrences(of: "FROM numbers", with: "FROM generate_series(\(first)::bigint, \(end - 1)::bigint) AS numbers(x)"))
        """
    }
  }
}
