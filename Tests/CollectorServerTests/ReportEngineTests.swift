import CollectorReports
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// The report API, the dashboard and trackerctl need only ``ReportEngine``: an engine that is not
/// SQL (here a test double answering from its own figures) serves them without any SQL store code.
@Suite("Report engines")
struct ReportEngineTests {
  /// An engine of fixed answers that records which report it was asked.
  final class FixedEngine: ReportEngine, @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [String] = []
    var calls: [String] {
      lock.lock()
      defer { lock.unlock() }
      return asked
    }

    private func record(_ name: String) {
      lock.lock()
      asked.append(name)
      lock.unlock()
    }

    static let list = CountList(
      dimension: "event", rows: [CountRow(name: "from_engine", count: 7, devices: 3, share: 100)])

    func apps() async throws -> [String] { ["ty"] }
    func population(_ filter: ReportFilter) async throws -> (devices: Int64, people: Int64) { (4, 4) }
    /// Every counting report comes here: one row of fixed figures for the first dimension.
    func aggregate(_ query: ReportQuery) async throws -> [SQLRow] {
      let by = query.dimensions.map { dimension in
        switch dimension {
        case .name: "name"
        case .context(let context): context.rawValue
        case .parameter(let key): "parameter \(key)"
        case .bucket(let bucket): bucket.rawValue
        }
      }
      record("aggregate \(by.joined(separator: ",")) \(query.limit.map(String.init) ?? "all")")
      let values = query.measures.map { SQLValue.int($0 == .devices ? 3 : 7) }
      return [
        SQLRow(columns: [query.column(of: 0)] + query.measures.map(\.column), values: [.text("from_engine")] + values)
      ]
    }
    func activeDevices(_ filter: ReportFilter) async throws -> ActiveDevices {
      ActiveDevices(daily: 1, weekly: 2, monthly: 3, new: 1, returning: 0)
    }
    func retention(
      _ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents
    ) async throws -> Retention {
      Retention(period: period, cohorts: [])
    }
    func funnel(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?) async throws -> Funnel {
      record("funnel \(steps.joined(separator: ">")) \(window)")
      return Funnel(window: window, appVersion: appVersion, steps: [])
    }
    /// Too many step events for the collector's walk: the dashboard falls back to ``funnel``.
    func funnelEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> [FunnelEvent] {
      throw FunnelPaths.tooManyEvents
    }
    func retentionUnits(
      _ filter: ReportFilter, period: ReportBucket, events: RetentionEvents, cohort: Int64, offset: Int64, limit: Int
    ) async throws -> UnitList { UnitList(unit: filter.unit, count: 0, units: []) }
    func sessions(_ filter: ReportFilter) async throws -> Sessions {
      Sessions(count: 0, medianDuration: 0, eventsPerSession: 0)
    }
    func eventRows(_ filter: ReportFilter, search: EventSearch, limit: Int, after: String?) async throws -> EventRows {
      EventRows(rows: [], next: nil)
    }
    func eventCount(_ filter: ReportFilter, search: EventSearch) async throws -> Int64 { 0 }
    func revenueDays(_ filter: ReportFilter) async throws -> [SQLRow] {
      record("revenue")
      return []
    }
    func topItemRows(_ filter: ReportFilter, category: String?, brand: String?, limit: Int) async throws -> [SQLRow] {
      record("topItems \(category ?? "-") \(brand ?? "-") \(limit)")
      return []
    }
  }

  @Test func anEngineOfItsOwnServesTheReportAPIAndTheDashboard() async throws {
    let base = try await makeCollector()
    let engine = FixedEngine()
    let collector = EventCollector(
      configuration: base.configuration, store: base.store, reports: engine, logger: Logger(label: "test"))
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, json, _) = try await ReportRouteTests.get(client, "/v1/reports/top-events?app=ty&limit=9")
      #expect(status == .ok)
      #expect(try JSONDecoder().decode(CountList.self, from: Data(json.utf8)) == FixedEngine.list)
      let (items, _, _) = try await ReportRouteTests.get(
        client, "/v1/reports/top-items?app=ty&category=Shoes&limit=5")
      #expect(items == .ok)
      let (funnel, _, _) = try await ReportRouteTests.get(
        client, "/v1/reports/funnel?app=ty&steps=a,b&window=2h")
      #expect(funnel == .ok)
      // Parameters are checked before an engine is asked: a bad one never reaches it.
      let (bad, why, _) = try await ReportRouteTests.get(client, "/v1/reports/top-events?app=ty&limit=0")
      #expect(bad == .badRequest && why.contains(#""field":"limit""#))
      let page = try await client.execute(
        uri: "/dashboard/breakdowns?app=ty", method: .get, headers: [.authorization: "Bearer \(adminKey)"]
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(page.0 == .ok && page.1.contains("from_engine"))
      let funnelPage = try await client.execute(
        uri: "/dashboard/funnel?app=ty&step=a&step=b&window=2h", method: .get,
        headers: [.authorization: "Bearer \(adminKey)"]
      ) { ($0.status, String(buffer: $0.body)) }
      #expect(
        funnelPage.0 == .ok && funnelPage.1.contains("No times to convert or drop-off lists: the steps have more"))
    }
    #expect(
      engine.calls == [
        "aggregate name 9", "topItems Shoes - 5", "funnel a>b 7200000", "aggregate platform 1000",
        "aggregate os-version 1000", "aggregate app-version 1000", "aggregate name 200", "funnel a>b 7200000",
      ])
  }
}
