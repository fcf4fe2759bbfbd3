public import CollectorStore

/// What a breakdown is by.
public enum ReportDimension: String, Sendable, CaseIterable {
  /// The platform.
  case platform
  /// The OS version (in version order).
  case osVersion = "os-version"
  /// The app version (in version order).
  case appVersion = "app-version"
  /// The app's own name as its events carry it (SimpleAnalytics' `app_name`, the native context's
  /// `appName`, GA4's `firebase_app_id`): several apps sending with one write key are told apart.
  case appName = "app-name"
}

/// A store's reports: the capability an engine offers, answered in the engine's own query language.
///
/// ``SQLReports`` answers them for SQLite and PostgreSQL (``ReportQuerying``); another engine (a
/// columnar store) conforms on its own, without touching the SQL engines. The collector's report
/// API, dashboard and trackerctl see only this protocol (``Report`` dispatches by name through
/// ``run(_:parameters:)``), and every engine must give the same answers on the same events: the
/// hand-computed report tests run against each. Active users, retention and funnels count people or
/// devices as the filter's ``ReportFilter/unit`` says, and their results name it.
///
/// Every method validates what it is given (``ReportText``, ranges) and throws ``FieldError`` naming
/// the parameter; anything else it throws is a storage failure.
public protocol ReportEngine: Sendable {
  /// The apps with events (at most 1,000, by name).
  func apps() async throws -> [String]
  /// The distinct devices in the range and the people among them (a device identified as a user
  /// counts as that user, with the user's other devices). The overview is written once over it and
  /// ``aggregate(_:)``.
  func population(_ filter: ReportFilter) async throws -> (devices: Int64, people: Int64)
  /// The rows of a counting question (``ReportQuery``): one per group, each dimension in its
  /// ``ReportQuery/column(of:)``, each measure in its ``ReportQuery/Measure/column``. Top events,
  /// breakdowns, parameter values, counters and time series are written once over it.
  func aggregate(_ query: ReportQuery) async throws -> [SQLRow]
  /// The overview's figures of one range. The default asks ``population(_:)`` and ``aggregate(_:)``
  /// at once (``Overview/Figures/init(_:population:aggregate:)``); an engine whose two answers
  /// share a step gives its own, taking that step once.
  func overviewFigures(_ filter: ReportFilter) async throws -> Overview.Figures
  /// DAU, WAU and MAU at the end of the range; new against returning users in the range; in people
  /// or devices (``ReportFilter/unit``).
  func activeDevices(_ filter: ReportFilter) async throws -> ActiveDevices
  /// Cohorts of people or devices (``ReportFilter/unit``) by the period of their first start event
  /// (``RetentionEvents``), the share doing the return event in each later period; optionally by
  /// the app version of their first start event.
  func retention(_ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool, events: RetentionEvents)
    async throws -> Retention
  /// People or devices (``ReportFilter/unit``) that did `steps` in order, each within `window` ms of
  /// their first step; a person's events on all of their devices form one path.
  func funnel(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?) async throws -> Funnel
  /// The step events of a funnel for the collector's walk (``funnelPaths(_:steps:window:droppedAt:limit:)``),
  /// grouped by unit, each unit's by time and event id; `limit + 1` at most, so a caller sees there
  /// were more (an engine that counts cheaply may throw ``FunnelPaths/tooManyEvents`` instead).
  func funnelEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> [FunnelEvent]
  /// The people or devices (``ReportFilter/unit``) first active in period `cohort` (counted from the
  /// range's start) and active `offset` periods later: their count and the first `limit` by id.
  func retentionUnits(
    _ filter: ReportFilter, period: ReportBucket, events: RetentionEvents, cohort: Int64, offset: Int64, limit: Int
  ) async throws -> UnitList
  /// Sessions: how many, median duration, events per session.
  func sessions(_ filter: ReportFilter) async throws -> Sessions
  /// Events that match `search` (``EventSearch``), newest first, `limit` per page after the cursor
  /// `after`.
  func eventRows(_ filter: ReportFilter, search: EventSearch, limit: Int, after: String?) async throws -> EventRows
  /// How many events match `search` in the filter's range.
  func eventCount(_ filter: ReportFilter, search: EventSearch) async throws -> Int64
  /// Orders and money per currency and UTC day of the range: each purchase transaction once (its
  /// first event by id among the orders of the range), each refund event; columns `day` (ms),
  /// `currency`, `orders`, `gross`, `refund_count` and `refunds`. Revenue is written once over it.
  func revenueDays(_ filter: ReportFilter) async throws -> [SQLRow]
  /// The purchased items with the most revenue (each purchase transaction once), optionally of one
  /// category or brand, `limit` at most (at least 1): columns `item`, `name` (its latest),
  /// `currency`, `units`, `revenue`, `orders` and `buyers`, by revenue descending, then item and
  /// currency. Top items is written once over it; `category` and `brand` are checked before.
  func topItemRows(_ filter: ReportFilter, category: String?, brand: String?, limit: Int) async throws -> [SQLRow]
}

extension ReportEngine {
  /// Revenue per currency (refunds subtracted), for the range and the range before, and per day.
  public func revenue(_ filter: ReportFilter) async throws -> Revenue {
    try filter.refusingAppName("revenue")
    async let current = revenueDays(filter)
    async let previous = revenueDays(filter.previous)
    return Revenue(filter, days: try await current, before: try await previous)
  }

  /// The purchased items with the most revenue, optionally of one category or brand.
  public func topItems(_ filter: ReportFilter, category: String?, brand: String?, limit: Int) async throws -> TopItems {
    try filter.refusingAppName("top items")
    try TopItems.check(category: category, brand: brand)
    let found = try await topItemRows(filter, category: category, brand: brand, limit: limit)
    return TopItems(found, category: category, brand: brand)
  }

  /// The 50 most frequent events.
  public func topEvents(_ filter: ReportFilter) async throws -> CountList { try await topEvents(filter, limit: 50) }

  /// The 50 most frequent values of `parameter` of `event`.
  public func parameterValues(_ filter: ReportFilter, event: String, parameter: String) async throws -> CountList {
    try await parameterValues(filter, event: event, parameter: parameter, limit: 50)
  }

  /// The 200 largest counter totals.
  public func counters(_ filter: ReportFilter) async throws -> CountList { try await counters(filter, limit: 200) }

  /// The series of all events.
  public func timeSeries(_ filter: ReportFilter, bucket: ReportBucket) async throws -> TimeSeries {
    try await timeSeries(filter, bucket: bucket, event: nil)
  }

  /// Retention not split by app version.
  public func retention(_ filter: ReportFilter, period: ReportBucket) async throws -> Retention {
    try await retention(filter, period: period, byAppVersion: false, events: .any)
  }

  /// Retention of first seen, then active (any event), optionally split by app version.
  public func retention(_ filter: ReportFilter, period: ReportBucket, byAppVersion: Bool) async throws -> Retention {
    try await retention(filter, period: period, byAppVersion: byAppVersion, events: .any)
  }

  /// A funnel over every app version.
  public func funnel(_ filter: ReportFilter, steps: [String], window: Int64) async throws -> Funnel {
    try await funnel(filter, steps: steps, window: window, appVersion: nil)
  }

  /// The 50 items with the most revenue, of every category and brand.
  public func topItems(_ filter: ReportFilter) async throws -> TopItems {
    try await topItems(filter, category: nil, brand: nil, limit: 50)
  }

  /// The first page of events named `event` (every event when `nil`), 100 by default.
  public func eventRows(_ filter: ReportFilter, event: String?, limit: Int = 100) async throws -> EventRows {
    try await eventRows(filter, search: EventSearch(event: event), limit: limit, after: nil)
  }
}
