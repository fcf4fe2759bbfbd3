import CollectorReports
import CollectorStore
import Testing

/// Reports over SQLite's rollups read them through the index by their key when their range covers
/// most of the app's stored hours (no sort of the range's rows), and by hour otherwise; both give
/// the events' answer. The names rollup: top events and one event's series, by name and device.
/// The sessions rollup: the overview's totals and its devices and people, by device and session.
@Suite("The rollups are read by key over wide ranges")
struct RollupKeyIndexTests {
  /// A store that passes every query on and keeps SQLite's plan of each one that `recorded` picks.
  actor PlanRecorder: ReportQuerying {
    nonisolated let store: any EventStore & BulkLoading
    let recorded: @Sendable (String) -> Bool
    private(set) var plans: [String] = []

    init(_ store: any EventStore & BulkLoading, recording recorded: @escaping @Sendable (String) -> Bool) {
      self.store = store
      self.recorded = recorded
    }

    nonisolated var dialect: any SQLDialect { store.dialect }
    nonisolated var eventsTable: String { store.eventsTable }
    nonisolated var countersTable: String { store.countersTable }
    nonisolated var rollups: RollupTables? { store.rollups }
    nonisolated var personsTable: String? { store.personsTable }

    func read(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow] {
      if recorded(sql) {
        let plan = try await store.read("EXPLAIN QUERY PLAN " + sql, arguments)
        plans.append(plan.compactMap { $0["detail"].text }.joined(separator: "\n"))
      }
      return try await store.read(sql, arguments)
    }
  }

  /// SQLite's statistics as a store may hold them: none (never analysed), all, or older than the
  /// indexes by key (analysed, then upgraded: the planner knows the other indexes' sizes only).
  enum Statistics: CaseIterable, Sendable { case none, all, olderThanKeyIndexes }

  /// The generated store with `statistics`, and a range of `days` from the second generated day.
  static func analysed(days: Int64, _ statistics: Statistics) async throws -> (
    store: any EventStore & BulkLoading, filter: ReportFilter
  ) {
    let store = try await Engine.sqlite.open(Generated.batches)
    switch statistics {
    case .none: break
    case .all: try await store.execute("ANALYZE")
    case .olderThanKeyIndexes:
      try await store.execute(
        "ANALYZE; DELETE FROM sqlite_stat1 WHERE idx IN ('rollup_names_by_name', 'rollup_sessions_by_device'); "
          + "ANALYZE sqlite_schema")
    }
    let filter = try ReportFilter(
      app: "shop", from: Generated.start + 86_400_000, to: Generated.start + (1 + days) * 86_400_000)
    return (store, filter)
  }

  @Test(
    "top events and one event's series pick their index by the share of the stored hours they cover",
    arguments: [(days: 21, byName: true), (days: 12, byName: true), (days: 2, byName: false)], Statistics.allCases)
  func reportsOfNamesPickTheirIndex(range: (days: Int64, byName: Bool), statistics: Statistics) async throws {
    let (days, byName) = range
    let (store, filter) = try await Self.analysed(days: days, statistics)
    let recorder = PlanRecorder(store) { $0.contains("FROM rollup_names WHERE") && $0.contains("GROUP BY") }
    let events = SQLReports(store: store, rollups: false)
    let top = try await SQLReports(store: recorder).topEvents(filter, limit: 100)
    #expect(top == (try await events.topEvents(filter, limit: 100)))
    #expect(top.rows.count > 3)
    let series = try await SQLReports(store: recorder).timeSeries(filter, bucket: .hour, event: "purchase")
    #expect(series == (try await events.timeSeries(filter, bucket: .hour, event: "purchase")))
    #expect(series.points.contains { $0.count > 0 })
    let plans = await recorder.plans
    #expect(plans.count >= 2)
    for plan in plans {
      #expect(plan.contains("rollup_names_by_name") == byName, "\(plan)")
    }
    // Read by name, top events come grouped by name: nothing sorts them for the grouping.
    if byName, let first = plans.first { #expect(!first.contains("TEMP B-TREE FOR GROUP BY"), "\(first)") }
    try await store.close()
  }

  @Test(
    "the overview's totals, devices and people pick their index by the share of the stored hours they cover",
    arguments: [(days: 21, byKey: true), (days: 12, byKey: true), (days: 2, byKey: false)], Statistics.allCases)
  func overviewPicksItsIndex(range: (days: Int64, byKey: Bool), statistics: Statistics) async throws {
    let (days, byKey) = range
    let (store, filter) = try await Self.analysed(days: days, statistics)
    let recorder = PlanRecorder(store) { $0.contains("FROM rollup_sessions WHERE") && !$0.contains("min(hour)") }
    let reports = SQLReports(store: recorder)
    let overview = try await reports.overview(filter)
    #expect(overview == (try await SQLReports(store: store, rollups: false).overview(filter)))
    #expect(overview.current.sessions > 0 && overview.current.people > 0)
    // The range's totals and its devices and people, each query's plan alone.
    let before = await recorder.plans.count
    _ = try await reports.aggregate(ReportQuery(filter, by: [], measuring: [.events, .sessions]))
    _ = try await reports.population(filter)
    let plans = await recorder.plans.dropFirst(before)
    #expect(plans.count == 2)
    for plan in plans {
      #expect(plan.contains("sqlite_autoindex_rollup_sessions") != byKey, "\(plan)")
    }
    if byKey, let totals = plans.first, let population = plans.last {
      #expect(totals.contains("COVERING INDEX rollup_sessions_by_device"), "\(totals)")
      // Read by device, the range's devices come in order: none is sorted to find the distinct ones.
      #expect(!population.contains("TEMP B-TREE FOR DISTINCT"), "\(population)")
    }
    try await store.close()
  }
}
