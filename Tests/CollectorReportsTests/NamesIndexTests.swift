import CollectorReports
import CollectorStore
import Testing

/// Reports over SQLite's names rollup (top events, one event's series) read it by name and device
/// when their range covers most of the app's stored hours (no sort of the range's rows), and by
/// hour otherwise; both give the events' answer.
@Suite("The names rollup is read by name over wide ranges")
struct NamesIndexTests {
  /// A store that passes every query on and keeps SQLite's plan of each one on the names rollup.
  actor PlanRecorder: ReportQuerying {
    nonisolated let store: any EventStore & BulkLoading
    private(set) var plans: [String] = []

    init(_ store: any EventStore & BulkLoading) { self.store = store }

    nonisolated var dialect: any SQLDialect { store.dialect }
    nonisolated var eventsTable: String { store.eventsTable }
    nonisolated var countersTable: String { store.countersTable }
    nonisolated var rollups: RollupTables? { store.rollups }
    nonisolated var personsTable: String? { store.personsTable }

    func read(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow] {
      if sql.contains("FROM rollup_names WHERE"), sql.contains("GROUP BY") {
        let plan = try await store.read("EXPLAIN QUERY PLAN " + sql, arguments)
        plans.append(plan.compactMap { $0["detail"].text }.joined(separator: "\n"))
      }
      return try await store.read(sql, arguments)
    }
  }

  @Test(
    "top events and one event's series pick their index by the share of the stored hours they cover",
    arguments: [(days: 21, byName: true), (days: 12, byName: true), (days: 2, byName: false)])
  func reportsOfNamesPickTheirIndex(days: Int64, byName: Bool) async throws {
    let store = try await Engine.sqlite.open(Generated.batches)
    // With statistics, SQLite's planner reads a narrow range of one name by name on its own.
    try await store.execute("ANALYZE")
    let recorder = PlanRecorder(store)
    let filter = try ReportFilter(
      app: "shop", from: Generated.start + 86_400_000, to: Generated.start + (1 + days) * 86_400_000)
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
}
