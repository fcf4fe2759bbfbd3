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
    guard usesRollups, let tables = store.rollups, filter.from % RollupTables.hour == 0,
      filter.to % RollupTables.hour == 0, filter.appName == nil
    else { return nil }
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

  // MARK: Overview

  /// Events, devices, sessions and counter increments, for the range and the range before it.
  public func overview(_ filter: ReportFilter) async throws -> Overview {
    async let current = figures(filter)
    async let previous = figures(filter.previous)
    return Overview(current: try await current, previous: try await previous)
  }

  private func figures(_ filter: ReportFilter) async throws -> Overview.Figures {
    var sql = SQLBuilder(store.dialect)
    // With a persons table, devices are counted with the people, from one distinct-device query.
    let devices = store.personsTable == nil ? "count(DISTINCT device_id) AS devices, " : ""
    let query: String
    if let rollups = rollups(filter) {
      query =
        "SELECT CAST(coalesce(sum(events), 0) AS BIGINT) AS events, \(devices)"
        + "count(DISTINCT \(sql.rollupSessionKey)) AS sessions FROM \(rollups.sessions) WHERE \(sql.rollupConditions(filter))"
    } else {
      query =
        "SELECT count(*) AS events, \(devices)count(DISTINCT \(sql.sessionKey)) AS sessions FROM \(store.eventsTable) "
        + "WHERE \(sql.conditions(filter))"
    }
    async let mapped = people(filter)
    let events = try await rows(query, sql).first
    var counterSQL = SQLBuilder(store.dialect)
    let counterConditions = counterSQL.conditions(filter, timeColumn: "first_counted_at")
    let counters =
      try await rows(
        "SELECT \(counterSQL.saturatingSum("count")) AS counters FROM \(store.countersTable) WHERE \(counterConditions)",
        counterSQL
      ).first
    let (deviceCount, peopleCount) = try await mapped ?? (events?["devices"].int ?? 0, events?["devices"].int ?? 0)
    return Overview.Figures(
      events: events?["events"].int ?? 0, devices: deviceCount, people: peopleCount,
      sessions: events?["sessions"].int ?? 0, counters: counters?["counters"].int ?? 0)
  }

  /// The devices active in the range and the distinct people among them (``PersonSQL``); `nil` when
  /// the store keeps no device-to-person table.
  private func people(_ filter: ReportFilter) async throws -> (devices: Int64, people: Int64)? {
    guard let persons = store.personsTable else { return nil }
    var sql = SQLBuilder(store.dialect)
    let devices =
      if let rollups = rollups(filter) {
        "SELECT DISTINCT app, device_id FROM \(rollups.sessions) WHERE \(sql.rollupConditions(filter))"
      } else {
        "SELECT DISTINCT app, device_id FROM \(store.eventsTable) WHERE \(sql.conditions(filter))"
      }
    let query = PersonSQL(events: store.eventsTable, persons: persons, dialect: store.dialect).people(from: devices)
    let row = try await rows(query, sql).first
    return (row?["devices"].int ?? 0, row?["people"].int ?? 0)
  }
}
