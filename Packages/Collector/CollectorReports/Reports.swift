public import CollectorStore
import CollectorWire
import Foundation

/// The reports of the SQL engines (SQLite and PostgreSQL): typed questions over a store, answered
/// with parameterised SQL the report layer writes itself (a client never sends SQL), in the store's
/// dialect.
///
/// ```swift
/// let reports = SQLReports(store: sqlite)
/// let filter = try ReportFilter(app: "ty", from: ReportTime.parse("2026-11-01")!, to: ReportTime.parse("2026-11-08")!)
/// let top = try await reports.topEvents(filter, limit: 20)
/// print(top.table.csv)
/// ```
public struct SQLReports: ReportEngine {
  /// The store read.
  public let store: any ReportQuerying
  /// Whether reports read the store's rollups where they can (ranges on whole hours).
  public let usesRollups: Bool

  /// Reports over `store`; `rollups: false` reads every event even where rollups would answer
  /// (results are the same, only slower; for comparisons and benchmarks).
  public init(store: any ReportQuerying, rollups: Bool = true) {
    self.store = store
    self.usesRollups = rollups
  }

  /// The rollups that can answer `filter`: the store keeps them and the range is on whole hours.
  func rollups(_ filter: ReportFilter) -> RollupTables? {
    guard usesRollups, let tables = store.rollups, filter.rollupsAnswer else { return nil }
    return tables
  }

  func rows(_ sql: String, _ builder: SQLBuilder) async throws -> [SQLRow] {
    try await store.read(sql, builder.arguments)
  }

  /// The apps with events (at most 1,000, by name).
  public func apps() async throws -> [String] {
    // One index seek per app (a loose index scan), not a scan of every event.
    let table = store.eventsTable
    return try await store.read(
      "WITH RECURSIVE a(app) AS (SELECT min(app) FROM \(table) UNION ALL "
        + "SELECT (SELECT min(app) FROM \(table) WHERE app > a.app) FROM a WHERE a.app IS NOT NULL) "
        + "SELECT app FROM a WHERE app IS NOT NULL LIMIT 1000", []
    ).compactMap { $0["app"].text }
  }

  // MARK: Population

  /// The distinct devices in the range and the people among them (``PersonSQL``); without a
  /// device-to-person table every device is a person of its own.
  public func population(_ filter: ReportFilter) async throws -> (devices: Int64, people: Int64) {
    if let counted = try await people(filter) { return counted }
    let devices = try await aggregate(ReportQuery(filter, by: [], measuring: [.devices])).first?[.devices] ?? 0
    return (devices, devices)
  }

  /// Whether a query over the sessions rollup for `filter` reads it by device and session
  /// (``readsRollupByKey(_:from:time:width:)``; its rows then come in device order, and no grouping
  /// or distinct by device sorts them); `false` when the rollups cannot answer `filter`.
  func readsSessionsByDevice(_ filter: ReportFilter) async throws -> Bool {
    guard let rollups = rollups(filter) else { return false }
    return try await readsRollupByKey(filter, from: rollups.sessions)
  }

  /// The devices active in the range and the distinct people among them (``PersonSQL``); `nil` when
  /// the store keeps no device-to-person table.
  private func people(_ filter: ReportFilter) async throws -> (devices: Int64, people: Int64)? {
    guard let persons = store.personsTable else { return nil }
    var sql = SQLBuilder(store.dialect)
    let devices =
      if let rollups = rollups(filter) {
        "SELECT DISTINCT app, device_id FROM \(rollups.sessions) "
          + "WHERE \(sql.rollupConditions(filter, byKey: try await readsSessionsByDevice(filter)))"
      } else {
        "SELECT DISTINCT app, device_id FROM \(store.eventsTable) WHERE \(sql.conditions(filter))"
      }
    let query = PersonSQL(events: store.eventsTable, persons: persons, dialect: store.dialect).people(from: devices)
    let row = try await rows(query, sql).first
    return (row?["devices"].int ?? 0, row?["people"].int ?? 0)
  }
}
