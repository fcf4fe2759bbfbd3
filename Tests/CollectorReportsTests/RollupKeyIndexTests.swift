import CollectorReports
import CollectorStore
import Testing

/// Reports over SQLite's rollups read them through the index by their key when their range covers
/// most of the app's stored hours (no sort of the range's rows), and by hour otherwise; both give
/// the events' answer. The names rollup: top events and one event's series, by name and device.
/// The sessions rollup: the overview's totals and its devices and people, sessions, active users and
/// retention, by device and session. The item facts: top items, by item.
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

  /// The reports checked: top events and one event's series (the names rollup), the overview's
  /// totals, devices and people (the sessions rollup), or top items (the item facts).
  enum Reports: CaseIterable, Sendable { case names, sessions, items }

  /// The cases: the reports, days from the second generated day, and whether a report over them
  /// reads its rollup by key (three weeks are stored).
  static let cases: [(reports: Reports, days: Int64, byKey: Bool)] = Reports.allCases.flatMap { reports in
    [(reports, 21, true), (reports, 12, true), (reports, 2, false)]
  }

  @Test(
    "reports on a rollup pick its index by the share of the stored hours they cover", arguments: cases,
    Statistics.allCases)
  func reportsPickTheirIndex(case: (reports: Reports, days: Int64, byKey: Bool), statistics: Statistics) async throws {
    let (store, filter, recorder) = try await Self.analysed(days: `case`.days, statistics) {
      switch `case`.reports {
      case .names: $0.contains("FROM rollup_names WHERE") && $0.contains("GROUP BY")
      case .sessions: $0.contains("FROM rollup_sessions WHERE") && !$0.contains("min(hour)")
      case .items: $0.contains("FROM rollup_items f WHERE")
      }
    }
    switch `case`.reports {
    case .names: try await Self.names(store, filter, recorder, byName: `case`.byKey)
    case .sessions: try await Self.sessions(store, filter, recorder, byKey: `case`.byKey)
    case .items: try await Self.items(store, filter, recorder, byItem: `case`.byKey)
    }
    try await store.close()
  }

  /// The generated store with `statistics`, the range of `days`, and a recorder of the plans of
  /// the queries `recording` picks.
  static func analysed(
    days: Int64, _ statistics: Statistics, recording: @escaping @Sendable (String) -> Bool
  ) async throws -> (store: any EventStore & BulkLoading, filter: ReportFilter, recorder: PlanRecorder) {
    let store = try await Engine.sqlite.open(Generated.batches)
    switch statistics {
    case .none: break
    case .all: try await store.execute("ANALYZE")
    case .olderThanKeyIndexes:
      try await store.execute(
        "ANALYZE; DELETE FROM sqlite_stat1 WHERE idx IN ('rollup_names_by_name', 'rollup_sessions_by_device', 'rollup_items_by_item'); "
          + "ANALYZE sqlite_schema")
    }
    let filter = try ReportFilter(
      app: "shop", from: Generated.start + 86_400_000, to: Generated.start + (1 + days) * 86_400_000)
    return (store, filter, PlanRecorder(store, recording: recording))
  }

  /// Top events and one event's series: the events' answers, read by name over a wide range.
  static func names(
    _ store: any EventStore & BulkLoading, _ filter: ReportFilter, _ recorder: PlanRecorder, byName: Bool
  ) async throws {
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
  }

  /// The overview's totals, devices and people: the events' answers, read by device and session
  /// over a wide range.
  static func sessions(
    _ store: any EventStore & BulkLoading, _ filter: ReportFilter, _ recorder: PlanRecorder, byKey: Bool
  ) async throws {
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
    // Sessions, active users and retention, in both units, read it by device over a wide range too.
    let events = SQLReports(store: store, rollups: false)
    let more = await recorder.plans.count
    #expect(try await reports.sessions(filter) == (try await events.sessions(filter)))
    for unit in ReportUnit.allCases {
      var filter = filter
      filter.unit = unit
      #expect(try await reports.activeDevices(filter) == (try await events.activeDevices(filter)))
      #expect(try await reports.retention(filter, period: .day) == (try await events.retention(filter, period: .day)))
    }
    let later = await recorder.plans.dropFirst(more)
    #expect(later.count >= 7)
    // Sessions read in an index's device order, grouped by the collector: no sort of the whole range.
    if byKey, let sessions = later.first { #expect(!sessions.contains("TEMP B-TREE FOR ORDER BY"), "\(sessions)") }
    // By device: through either index that starts with the device (SQLite picks by its statistics).
    // Over a narrow range with no statistics, SQLite reads these by `rollup_sessions_app_device`
    // (device order spares it a sort) whatever the query says, as it did before they read by key.
    for plan in later where byKey {
      #expect(!plan.contains("sqlite_autoindex_rollup_sessions"), "\(plan)")
    }
  }

  /// Top items, of every item, one category and one brand: the events' answers, read by item over a
  /// wide range, the items then grouped in index order.
  static func items(
    _ store: any EventStore & BulkLoading, _ filter: ReportFilter, _ recorder: PlanRecorder, byItem: Bool
  ) async throws {
    let events = SQLReports(store: store, rollups: false)
    for (category, brand) in [(nil, nil), ("shoes", nil), (nil, "B")] as [(String?, String?)] {
      let top = try await SQLReports(store: recorder).topItems(filter, category: category, brand: brand, limit: 100)
      #expect(top == (try await events.topItems(filter, category: category, brand: brand, limit: 100)))
      #expect(top.rows.count > 3)
    }
    let plans = await recorder.plans
    #expect(plans.count == 3)
    for plan in plans {
      #expect(plan.contains("rollup_items_by_item") == byItem, "\(plan)")
      // Read by item, the index alone answers (no row is looked up) and no group is sorted.
      if byItem {
        #expect(plan.contains("COVERING INDEX rollup_items_by_item"), "\(plan)")
        #expect(!plan.contains("TEMP B-TREE FOR GROUP BY"), "\(plan)")
      }
    }
  }
}
