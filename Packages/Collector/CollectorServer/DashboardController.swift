import CollectorDashboard
import CollectorIngest
import CollectorReports
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The web dashboard at `/`: server-rendered HTML with SVG charts for every report.
///
/// A browser signs in once with an admin key (`/login?key=…`, or the form the dashboard shows),
/// kept in an HTTP-only, same-site cookie; `Authorization: Basic` (the key as password) and `Bearer`
/// work too, for scripts.
struct DashboardController: Sendable {
  let collector: EventCollector
  static let cookie = "collector_admin"

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    let pages = router.behind(
      collector.surface("dashboard") { refusal in
        let text = refusal.status == .badRequest ? SVG.escape(refusal.message) : "The store is unavailable."
        return .html(refusal.status, "<!doctype html><p class=\"error\">\(text)</p>")
      })
    pages.get("/") { request, _ in try await self.page(request, path: "/") }
    pages.get("/dashboard/:page") { request, context in
      try await self.page(request, path: "/dashboard/" + (context.parameters.get("page") ?? ""))
    }
    pages.get("/login") { request, _ in await self.login(request) }
  }

  // MARK: Sign-in

  func login(_ request: Request) async -> Response {
    let query = request.form
    let next = SameSitePath.normalised(query.get("next"))
    guard let key = query.secret("key"), await isAdmin(key) else {
      return .html(.unauthorized, Dashboard.login(next: next, failed: query.secret("key") != nil))
    }
    let value = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key
    return Response(
      status: .seeOther,
      headers: [
        .location: next, .setCookie: "\(Self.cookie)=\(value); Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000",
      ])
  }

  private func presentedKey(_ request: Request) -> String? {
    if let cookies = request.headers[.cookie] {
      for part in cookies.split(separator: ";") {
        let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
        if pair.count == 2, pair[0] == Self.cookie { return String(pair[1]).removingPercentEncoding }
      }
    }
    return Credentials.basic(request) ?? Credentials.bearer(request)
  }

  private func isAdmin(_ key: String?) async -> Bool {
    guard let key, !key.isEmpty, let record = try? await collector.keyRing.authenticate(key) else { return false }
    return record.scope == .admin
  }

  // MARK: Pages

  func page(_ request: Request, path: String) async throws -> Response {
    let query = request.form
    guard await isAdmin(presentedKey(request)) else {
      let next = path + (request.uri.query.map { "?" + $0 } ?? "")
      return .html(.unauthorized, Dashboard.login(next: next, failed: false))
    }
    guard let page = DashboardPage(path: path) else {
      return .html(
        .notFound, Dashboard.login(next: "/", failed: false).replacingOccurrences(of: "Sign in", with: "Not found"))
    }
    guard let reports = collector.reports else {
      return .html(.notImplemented, "<p>This store does not serve reports.</p>")
    }
    do {
      let apps = try await reports.apps()
      let app = query.get("app").flatMap { $0.isEmpty ? nil : $0 } ?? apps.first ?? ""
      let day: Int64 = 86_400_000
      let today = Int64(Date().timeIntervalSince1970 * 1000) / day * day
      let toText = query.get("to").flatMap { $0.isEmpty ? nil : $0 } ?? String(ReportTime.iso(today).prefix(10))
      let fromText =
        query.get("from").flatMap { $0.isEmpty ? nil : $0 } ?? String(ReportTime.iso(today - 6 * day).prefix(10))
      guard let from = ReportTime.parse(fromText) else {
        throw FieldError(field: "from", reason: "pick days such as 2026-11-01")
      }
      guard let lastDay = ReportTime.parse(toText) else {
        throw FieldError(field: "to", reason: "pick days such as 2026-11-01")
      }
      let unit = try ReportUnit(parameter: query.get("unit"))
      let context = Dashboard.Context(app: app, apps: apps, from: fromText, to: toText, page: page, unit: unit)
      guard !app.isEmpty else { return .html(.ok, Dashboard.empty(context: context)) }
      let filter = try ReportFilter(app: app, from: from, to: lastDay + day, unit: unit)
      return .html(.ok, try await body(page, filter: filter, query: query, reports: reports, context: context))
    } catch let error as FieldError {
      throw error
    } catch {
      collector.logger.error("dashboard \(path) failed: \(error)")
      throw Refusal.storage("retry")
    }
  }

  /// The `page` for `filter`.
  private func body(
    _ page: DashboardPage, filter: ReportFilter, query: FormQuery, reports: any ReportEngine, context: Dashboard.Context
  ) async throws -> String {
    let day: Int64 = 86_400_000
    switch page {
    case .overview:
      async let overview = reports.overview(filter)
      async let series = reports.timeSeries(filter, bucket: (filter.to - filter.from) <= 2 * day ? .hour : .day)
      async let top = reports.topEvents(filter, limit: 15)
      async let active = reports.activeDevices(filter)
      async let sessions = reports.sessions(filter)
      return Dashboard.overview(
        try await overview, series: try await series, top: try await top, active: try await active,
        sessions: try await sessions, context: context)
    case .events:
      let top = try await reports.topEvents(filter, limit: 50)
      let event = query.get("event").flatMap { $0.isEmpty ? nil : $0 } ?? top.rows.first?.name
      let parameter = query.get("parameter").flatMap { $0.isEmpty ? nil : $0 }
      var values: CountList?
      var rows: EventRows?
      if let event {
        rows = try await reports.eventRows(filter, event: event, limit: 25)
        if let parameter { values = try await reports.parameterValues(filter, event: event, parameter: parameter) }
      }
      return Dashboard.events(
        top: top, event: event, parameter: parameter, values: values, rows: rows, context: context)
    case .retention:
      let period: ReportBucket = (filter.to - filter.from) > 21 * day ? .week : .day
      return Dashboard.retention(try await reports.retention(filter, period: period), context: context)
    case .breakdowns:
      return Dashboard.breakdowns(
        platform: try await reports.breakdown(filter, by: .platform),
        os: try await reports.breakdown(filter, by: .osVersion),
        app: try await reports.breakdown(filter, by: .appVersion), context: context)
    case .funnel:
      let steps = query.get("steps") ?? ""
      let window = query.get("window") ?? "1d"
      let names = steps.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
      var funnel: Funnel?
      if names.count >= 2 {
        guard let milliseconds = Report.duration(window) else {
          throw FieldError(field: "window", reason: "is a duration such as 30m, 2h, 1d")
        }
        funnel = try await reports.funnel(filter, steps: names, window: milliseconds)
      }
      return Dashboard.funnel(
        funnel, steps: steps, window: window, top: try await reports.topEvents(filter, limit: 50), context: context)
    case .counters:
      return Dashboard.counters(try await reports.counters(filter), context: context)
    case .revenue:
      async let revenue = reports.revenue(filter)
      async let items = reports.topItems(
        filter, category: query.get("category").flatMap { $0.isEmpty ? nil : $0 },
        brand: query.get("brand").flatMap { $0.isEmpty ? nil : $0 }, limit: 20)
      return Dashboard.revenue(try await revenue, items: try await items, context: context)
    }
  }
}
