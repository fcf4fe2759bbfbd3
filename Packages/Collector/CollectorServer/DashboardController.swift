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
/// A browser signs in once with a read or admin key through the sign-in form (`POST /login`, never a
/// key in a URL) and holds a server-side session in a cookie (``SessionCookie``); `POST /logout`
/// ends it. `Authorization: Basic` (the key as password) and `Bearer` work too, for scripts. Every
/// answer carries ``Response/dashboardHeaders``; reports run through the ``ReportGate``.
struct DashboardController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    let pages = router.behind(
      DashboardHeadersMiddleware(),
      collector.surface("dashboard") { refusal in
        let text = refusal.status.code < 500 ? refusal.message : "The store is unavailable."
        let title = refusal.status.code < 500 ? "This page cannot be shown" : "Try again shortly"
        var response = Response.html(refusal.status, Dashboard.problem(title: title, message: text))
        if let retryAfter = refusal.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
      })
    pages.get("/") { request, context in try await self.page(request, context, path: "/") }
    pages.get("/dashboard/:page") { request, context in
      try await self.page(request, context, path: "/dashboard/" + (context.parameters.get("page") ?? ""))
    }
    pages.get("/dashboard/live-events") { request, _ in
      try await LiveStream(collector: collector).stream(request, viewer: try await self.viewer(request))
    }
    pages.get("/dashboard/assets/live.js") { _, _ in
      Response(
        status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"],
        body: ResponseBody(byteBuffer: ByteBuffer(string: Dashboard.liveScript)))
    }
    pages.get("/dashboard/view/:id") { request, context in
      try await self.openView(request, id: context.parameters.get("id") ?? "")
    }
    pages.post("/views/save") { request, _ in try await self.saveView(request) }
    pages.post("/views/delete") { request, _ in try await self.deleteView(request) }
    pages.post("/annotations/add") { request, _ in try await self.addNote(request) }
    pages.post("/annotations/delete") { request, _ in try await self.deleteNote(request) }
    pages.get("/login") { request, _ in self.loginForm(request) }
    pages.post("/login") { request, context in try await self.signIn(request, context) }
    pages.post("/logout") { request, _ in try await self.signOut(request) }
    pages.post("/quarantine/replay") { request, _ in try await self.replayQuarantine(request) }
  }

  // MARK: Pages

  func page(_ request: Request, _ requestContext: CollectorRequestContext, path: String) async throws -> Response {
    let query = request.form
    guard let viewer = try await viewer(request) else {
      let next = path + (request.uri.query.map { "?" + $0 } ?? "")
      return .html(.unauthorized, Dashboard.login(next: next))
    }
    guard let page = DashboardPage(path: path) else {
      return .html(.notFound, Dashboard.problem(title: "Not found", message: "There is no page \(path)."))
    }
    if page == .audit, !viewer.isAdmin {
      throw Refusal(.forbidden, "key", "the audit trail needs an admin key; this session is a read key's")
    }
    guard let reports = collector.reports else {
      return .html(.notImplemented, "<p>This store does not serve reports.</p>")
    }
    return try await collector.storing("dashboard \(path)") {
      var context = try await pageContext(page, query: query, reports: reports, viewer: viewer)
      // A page whose query a view cannot keep (a key in it, too long) is shown without the save form.
      if let query = try? Self.viewQuery(request.uri.query ?? "") {
        context.pageQuery = query
      } else {
        context.isSavable = false
      }
      if let id = query.get("view"), let view = try await collector.store.savedView(id: id), view.app == context.app {
        context.openView = view
      }
      if page == .audit { return .html(.ok, try await auditPage(context)) }
      if page == .quarantine { return .html(.ok, try await quarantinePage(context, replayed: query.get("replayed"))) }
      guard !context.app.isEmpty else { return .html(.ok, Dashboard.empty(context: context)) }
      let filter = try context.reportFilter()
      let shown = context
      let html = try await collector.report {
        try await self.body(page, filter: filter, query: query, reports: reports, context: shown)
      }
      return .html(.ok, html)
    }
  }

  /// The header's context: the app and range picked (checked, each error naming its field), the
  /// unit, and what the viewer may do.
  private func pageContext(
    _ page: DashboardPage, query: FormQuery, reports: any ReportEngine, viewer: Viewer
  ) async throws -> Dashboard.Context {
    let catalog = AppEnvironment.catalog(try await collector.report { try await reports.apps() })
    let apps = catalog.map(\.app)
    let app = query.get("app").flatMap { $0.isEmpty ? nil : $0 } ?? apps.first ?? ""
    let environment = query.get("environment").flatMap { $0.isEmpty ? nil : $0 } ?? AppEnvironment.production
    guard AppEnvironment.isName(environment) else {
      throw FieldError(field: "environment", reason: AppEnvironment.nameRule)
    }
    let day: Int64 = 86_400_000
    let zone = try ReportZone.named(query.get("tz")) ?? collector.configuration.zone(of: app)
    // Today in the zone, as the day the picker shows.
    let today = zone.day(of: Int64(Date().timeIntervalSince1970 * 1000)) * day
    let toText = query.get("to").flatMap { $0.isEmpty ? nil : $0 } ?? String(ReportTime.iso(today).prefix(10))
    let fromText =
      query.get("from").flatMap { $0.isEmpty ? nil : $0 } ?? String(ReportTime.iso(today - 6 * day).prefix(10))
    guard ReportTime.parse(fromText) != nil else {
      throw FieldError(field: "from", reason: "pick days such as 2026-11-01")
    }
    guard ReportTime.parse(toText) != nil else { throw FieldError(field: "to", reason: "pick days such as 2026-11-01") }
    let unit = try ReportUnit(parameter: query.get("unit"))
    var context = Dashboard.Context(
      app: app, apps: apps, from: fromText, to: toText, page: page, unit: unit, csrf: viewer.csrf,
      isAdmin: viewer.isAdmin, zone: zone)
    context.platform = query.get("platform") ?? ""
    context.appVersion = query.get("appVersion") ?? ""
    context.osVersion = query.get("osVersion") ?? ""
    context.today = String(ReportTime.iso(today).prefix(10))
    context.environment = environment
    context.environments = catalog.first { $0.app == app }?.environments ?? []
    context.viewer = viewer.key.id
    return context
  }

  private func auditPage(_ context: Dashboard.Context) async throws -> String {
    let entries = try await collector.audit.entries(limit: 200)
    let table = ReportTable(
      columns: ["time", "key", "action", "detail"],
      rows: entries.map { [ReportTime.iso($0.time), $0.actor, $0.action, $0.detail] })
    return Dashboard.audit(table, context: context)
  }

  /// The overview: figures against the previous range, the quarantine's held entries, charts.
  private func overviewPage(
    _ filter: ReportFilter, reports: any ReportEngine, context: Dashboard.Context
  ) async throws -> String {
    let day: Int64 = 86_400_000
    async let overview = reports.overview(filter)
    let bucket: ReportBucket = (filter.to - filter.from) <= 2 * day ? .hour : .day
    async let series = reports.timeSeries(filter, bucket: bucket)
    async let previousSeries = reports.timeSeries(filter.previous, bucket: bucket)
    async let top = reports.topEvents(filter, limit: 15)
    async let active = reports.activeDevices(filter)
    async let sessions = reports.sessions(filter)
    let quarantined = try await collector.store.quarantinedCount(
      app: filter.storedApp, from: filter.from, to: filter.to)
    return Dashboard.overview(
      try await overview, series: try await series, previousSeries: try await previousSeries, top: try await top,
      active: try await active,
      sessions: try await sessions, quarantined: Int64(quarantined), context: context)
  }

  /// The funnel of the steps the query names (`step`, repeated, as the page's pickers send them, or
  /// `steps`, comma-separated; `window`); with none named, the app's three most common events, most
  /// common first (a funnel narrows). The range's events feed the pickers.
  private func funnelPage(
    _ filter: ReportFilter, query: FormQuery, reports: any ReportEngine, context: Dashboard.Context
  ) async throws -> String {
    let top = try await reports.topEvents(filter, limit: 200)
    let picked = query.all("step").filter { !$0.isEmpty }
    let written = (query.get("steps") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    var names = picked.isEmpty ? written.filter { !$0.isEmpty } : picked
    let isDefault = names.isEmpty && query.get("steps") == nil
    if isDefault { names = Array(top.rows.map(\.name).filter { !$0.isEmpty }.prefix(3)) }
    let window = query.get("window") ?? "1d"
    var view = Dashboard.FunnelView(funnel: nil)
    if names.count >= 2 {
      guard let milliseconds = Report.duration(window) else {
        throw FieldError(field: "window", reason: "is a duration such as 30m, 2h, 1d")
      }
      view.droppedAt = try query.get("dropped").map { text throws(FieldError) in
        guard let step = Int(text) else { throw FieldError(field: "dropped", reason: "is a step number") }
        return step
      }
      do {
        // One walk gives the funnel, its times and its drop-offs; a range with too many step events
        // for the walk gets the engine's funnel alone.
        let paths = try await reports.funnelPaths(filter, steps: names, window: milliseconds, droppedAt: view.droppedAt)
        view.paths = paths
        view.funnel = Funnel(
          reached: paths.reached, steps: names, window: milliseconds, appVersion: nil, unit: filter.unit)
      } catch let error as FieldError where error == FunnelPaths.tooManyEvents {
        view.pathsProblem = error.reason
        view.funnel = try await reports.funnel(filter, steps: names, window: milliseconds)
      }
    }
    return Dashboard.funnel(view, steps: names, window: window, top: top, isDefault: isDefault, context: context)
  }

  /// Cohorts of the range's last 400 weeks at most (the report's bound): every range the page offers
  /// answers, a longer one says what it shows. A cell named (`cohort`, its first day, and `offset`)
  /// lists its people or devices.
  private func retentionPage(
    _ filter: ReportFilter, query: FormQuery, reports: any ReportEngine, context: Dashboard.Context
  ) async throws -> String {
    let period: ReportBucket = (filter.to - filter.from) > 21 * 86_400_000 ? .week : .day
    var cohorts = filter
    cohorts.from = max(filter.from, filter.to - 400 * period.milliseconds)
    let note = cohorts.from > filter.from ? "the cohorts of the last 400 weeks of the range" : nil
    let named = { (key: String) in query.get(key).flatMap { $0.isEmpty ? nil : $0 } }
    let events = RetentionEvents(start: named("startEvent"), back: named("returnEvent"))
    var cell: (cohort: Int64, offset: Int, units: UnitList)?
    if let day = query.get("cohort") {
      guard let local = ReportTime.parse(day), let offset = Int(query.get("offset") ?? "") else {
        throw FieldError(field: "cohort", reason: "name a cohort's first day (2026-11-02) and an offset (0 or more)")
      }
      let start = context.zone.utc(local: local)
      let units = try await reports.retainedUnits(
        cohorts, period: period, events: events, cohort: start, offset: offset)
      cell = (start, offset, units)
    }
    async let top = reports.topEvents(filter, limit: 200)
    let retention = try await reports.retention(cohorts, period: period, byAppVersion: false, events: events)
    return Dashboard.retention(retention, note: note, cell: cell, top: try await top, context: context)
  }

  /// The events matching the query's search (``EventSearch``; an empty event is every event),
  /// counted, a page at a time (`after`), with the range's event names to pick from.
  private func searchPage(
    _ filter: ReportFilter, query: FormQuery, reports: any ReportEngine, context: Dashboard.Context
  ) async throws -> String {
    let search = try EventSearch { key in
      key == "event" ? query.get(key).flatMap { $0.isEmpty ? nil : $0 } : query.get(key)
    }
    let after = query.get("after").flatMap { $0.isEmpty ? nil : $0 }
    async let count = reports.eventCount(filter, search: search)
    async let rows = reports.eventRows(filter, search: search, limit: 50, after: after)
    async let top = reports.topEvents(filter, limit: 200)
    return Dashboard.search(
      search, count: try await count, rows: try await rows, names: try await top.rows.map(\.name), context: context)
  }

  /// A device's (`device`) or person's (`user`) page: their properties and timeline.
  private func profilePage(
    _ filter: ReportFilter, query: FormQuery, reports: any ReportEngine, context: Dashboard.Context
  ) async throws -> String {
    let search = try EventSearch { key in
      ["device", "user"].contains(key) ? query.get(key).flatMap { $0.isEmpty ? nil : $0 } : nil
    }
    guard search.device != nil || search.user != nil else {
      throw FieldError(field: "device", reason: "name a device (device=) or a user (user=)")
    }
    let after = query.get("after").flatMap { $0.isEmpty ? nil : $0 }
    async let count = reports.eventCount(filter, search: search)
    async let rows = reports.eventRows(filter, search: search, limit: 100, after: after)
    return Dashboard.profile(search, count: try await count, rows: try await rows, context: context)
  }

  /// The `page` for `filter`.
  private func body(
    _ page: DashboardPage, filter: ReportFilter, query: FormQuery, reports: any ReportEngine, context: Dashboard.Context
  ) async throws -> String {
    switch page {
    case .overview:
      var marked = context
      marked.marks = try await marks(filter, reports: reports)
      return try await overviewPage(filter, reports: reports, context: marked)
    case .events:
      let top = try await reports.topEvents(filter, limit: 50)
      // An empty name is an event's name too (its row opens its own rows), not "none picked".
      let event = query.get("event") ?? top.rows.first?.name
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
      return try await retentionPage(filter, query: query, reports: reports, context: context)
    case .breakdowns:
      return Dashboard.breakdowns(
        platform: try await reports.breakdown(filter, by: .platform),
        os: try await reports.breakdown(filter, by: .osVersion),
        app: try await reports.breakdown(filter, by: .appVersion), context: context)
    case .funnel:
      return try await funnelPage(filter, query: query, reports: reports, context: context)
    case .search:
      return try await searchPage(filter, query: query, reports: reports, context: context)
    case .profile:
      return try await profilePage(filter, query: query, reports: reports, context: context)
    case .saved:
      return Dashboard.saved(try await collector.store.savedViews(app: context.app), context: context)
    case .live:
      return Dashboard.live(event: query.get("event") ?? "", device: query.get("device") ?? "", context: context)
    case .counters:
      return Dashboard.counters(try await reports.counters(filter), context: context)
    case .audit: return try await auditPage(context)
    case .quarantine: return try await quarantinePage(context, replayed: nil)
    case .plan: return try await planPage(context, reports: reports)
    case .revenue:
      var marked = context
      marked.marks = try await marks(filter, reports: reports)
      async let revenue = reports.revenue(filter)
      async let items = reports.topItems(
        filter, category: query.get("category").flatMap { $0.isEmpty ? nil : $0 },
        brand: query.get("brand").flatMap { $0.isEmpty ? nil : $0 }, limit: 20)
      return Dashboard.revenue(try await revenue, items: try await items, context: marked)
    }
  }
}

extension Dashboard.Context {
  /// The page's report filter: what the API answers for ``apiQuery``, the one filter every page reads.
  func reportFilter() throws(FieldError) -> ReportFilter {
    guard let range else { throw FieldError(field: "from", reason: "pick days such as 2026-11-01") }
    return try ReportFilter(
      app: app, from: range.from, to: range.to, platform: platform, appVersion: appVersion, osVersion: osVersion,
      unit: unit, zone: zone, environment: environment)
  }
}
