public import CollectorReports
public import CollectorStore
import CollectorWire
import Foundation

/// The dashboard's pages, rendered on the server as HTML with inline SVG charts: no CDN, no build
/// step, no script but the live page's one file; one column on a phone, wider on a desktop.
public enum Dashboard {
  /// What every page shows in its header: the app and range pickers and the navigation.
  public struct Context: Sendable {
    /// The app shown.
    public var app: String
    /// The apps there are data for.
    public var apps: [String]
    /// The first day (`2026-11-01`).
    public var from: String
    /// The last day, included (`2026-11-07`).
    public var to: String
    /// The page shown.
    public var page: DashboardPage
    /// What active users, retention and funnels count: people or devices.
    public var unit: ReportUnit
    /// The session's CSRF token, for the sign-out form (empty for a key sent with each request).
    public var csrf: String
    /// Whether the viewer may see the admin pages (the audit trail).
    public var isAdmin: Bool
    /// The time zone the days are in (the app's configured zone unless the page names one).
    public var zone: ReportZone
    /// Only events of this platform, app version, OS version (empty: all), as the API's filters.
    public var platform = "", appVersion = "", osVersion = ""
    /// Today in ``zone`` (`2026-11-27`), for the range presets; empty: none offered.
    public var today = ""
    /// The environment shown (``AppEnvironment``): production unless picked; any other wears a banner.
    public var environment = AppEnvironment.production
    /// The environments the app has data in, for the picker (production first).
    public var environments: [String] = []
    /// The public id of the viewer's key (``SavedView/createdBy`` of what they save).
    public var viewer = ""
    /// The page's own query string, as a saved view keeps it (no cursor, no view id).
    public var pageQuery = ""
    /// Whether a view may keep the page (its query holds no key and is not too long).
    public var isSavable = true
    /// The saved view the page was opened from (`view=<id>`), if any.
    public var openView: SavedView?
    /// Releases and notes in the range, for the time charts (``ChartMark``).
    public var marks: [ChartMark] = []
    /// The page's path (`/`, `/dashboard/retention`, ...).
    public var path: String { page.path }

    /// A context.
    public init(
      app: String, apps: [String], from: String, to: String, page: DashboardPage, unit: ReportUnit = .person,
      csrf: String = "", isAdmin: Bool = false, zone: ReportZone = .utc
    ) {
      self.zone = zone
      self.app = app
      self.apps = apps
      self.from = from
      self.to = to
      self.page = page
      self.unit = unit
      self.csrf = csrf
      self.isAdmin = isAdmin
    }

    /// The pages the viewer may open, in the navigation's order.
    public var pages: [DashboardPage] { DashboardPage.allCases.filter { $0.isListed && (isAdmin || $0 != .audit) } }
  }

  // MARK: Pages

  /// Figures against the previous range, active devices, sessions, events per day (with the range
  /// before, `previousSeries`, under them), top events. The events, counters and quarantined figures
  /// open what they count.
  public static func overview(
    _ overview: Overview, series: TimeSeries, previousSeries: TimeSeries? = nil, top: CountList,
    active: ActiveDevices, sessions: Sessions, quarantined: Int64 = 0, context: Context
  ) -> String {
    let figures: [(String, Int64, Int64?)] = [
      ("Events", overview.current.events, overview.previous.events),
      ("Devices", overview.current.devices, overview.previous.devices),
      ("People", overview.current.people, overview.previous.people),
      ("Sessions", overview.current.sessions, overview.previous.sessions),
      ("Counters", overview.current.counters, overview.previous.counters), ("DAU", active.daily, nil),
      ("WAU", active.weekly, nil), ("MAU", active.monthly, nil), ("New \(active.unit.plural)", active.new, nil),
      ("Returning", active.returning, nil), ("Quarantined", quarantined, nil),
    ]
    var body = #"<section class="figures">"#
    let links = [
      "Events": searchLink(context), "Counters": "/dashboard/counters?" + query(context.queryItems),
      "Quarantined": "/dashboard/quarantine?" + query([("app", context.app)]),
    ]
    for (name, value, previous) in figures {
      body +=
        links[name].map { #"<a class="figure" href="\#(SVG.escape($0))">"# } ?? #"<div class="figure">"#
      body += #"<span class="name">\#(SVG.escape(name))</span><span class="value">\#(value)</span>"#
      if let previous {
        let change =
          previous == 0 ? "new" : String(format: "%+.0f%%", Double(value - previous) * 100 / Double(previous))
        body += #"<span class="change">\#(change) vs previous</span>"#
      }
      body += links[name] == nil ? "</div>" : "</a>"
    }
    body += "</section>"
    body += card(
      "Sessions",
      "\(sessions.count) sessions, median \(duration(sessions.medianDuration)), "
        + String(format: "%.1f", sessions.eventsPerSession) + " events per session")
    body += card(
      "Events per \(series.bucket.rawValue)", lineChart(series, previous: previousSeries, context: context),
      csv: csvLink(context, "timeseries", [("bucket", series.bucket.rawValue)]))
    body += card(
      "Top events", bars(top) { searchLink(context, search: [("event", $0)]) },
      csv: csvLink(context, "top-events", [("limit", "15")]))
    return page("Overview", body: body, context: context)
  }

  /// Top events, and for one event its parameter values and its latest rows.
  public static func events(
    top: CountList, event: String?, parameter: String?, values: CountList?, rows: EventRows?, context: Context
  ) -> String {
    var body = card(
      "Top events", bars(top) { searchLink(context, search: [("event", $0)]) },
      csv: csvLink(context, "top-events", [("limit", "50")]))
    body += #"<form class="pick" method="get" action="/dashboard/events">\#(hiddenFilter(context))"#
    body += #"<label>Event <select name="event">"#
    for row in top.rows { body += option(row.name, selected: row.name == event) }
    body +=
      #"</select></label><label>Parameter <input name="parameter" value="\#(SVG.escape(parameter ?? ""))"></label>"#
    body += #"<button>Show</button></form>"#
    if let event, let values, let parameter {
      let values = bars(values) { value in
        value.contains(";")
          ? nil : searchLink(context, search: [("event", event), ("parameters", "\(parameter)=\(value)")])
      }
      body += card(
        "Values of \(parameter) in \(event)", values,
        csv: csvLink(context, "parameter-values", [("event", event), ("parameter", parameter)]))
    }
    if let event, let rows {
      body += card(
        "Latest \(event)", eventTable(rows, context: context), csv: csvLink(context, "events", [("event", event)]))
    }
    return page("Events", body: body, context: context)
  }

  /// Platform, OS version and app version shares.
  public static func breakdowns(platform: CountList, os: CountList, app: CountList, context: Context) -> String {
    page(
      "Breakdowns",
      body: card(
        "Platforms", bars(platform) { searchLink(context, filter: ["platform": $0]) },
        csv: csvLink(context, "breakdown", [("by", "platform")]))
        + card(
          "App versions", bars(app) { searchLink(context, filter: ["appVersion": $0]) },
          csv: csvLink(context, "breakdown", [("by", "app-version")]))
        + card(
          "OS versions", bars(os) { searchLink(context, filter: ["osVersion": $0]) },
          csv: csvLink(context, "breakdown", [("by", "os-version")])),
      context: context)
  }

  /// Counter totals.
  public static func counters(_ counters: CountList, context: Context) -> String {
    page("Counters", body: card("Counter totals", bars(counters), csv: csvLink(context, "counters")), context: context)
  }

  /// The page shown before any event arrived.
  public static func empty(context: Context) -> String {
    page(
      "No data yet",
      body: card(
        "No data yet",
        "<p>No app has sent events to this collector yet. Send a batch to <code>/v1/batch</code> with a write key, "
          + "or run <code>swift run shop-demo</code>.</p>"), context: context)
  }

  /// The sign-in page: a form that posts a read or admin key (never in the URL), with `problem`
  /// said above it.
  public static func login(next: String, problem: String? = nil, title: String = "Sign in") -> String {
    var body = #"<section class="card"><h2>\#(SVG.escape(title))</h2>"#
    if let problem { body += #"<p class="error">\#(SVG.escape(problem))</p>"# }
    body += #"<form method="post" action="/login"><input type="hidden" name="next" value="\#(SVG.escape(next))">"#
    body += #"<label>Read or admin key <input type="password" name="key" autocomplete="current-password"></label>"#
    body += "<button>Sign in</button></form></section>"
    return document(title: title, header: "", body: body)
  }

  /// The audit trail: who (a key's id) did what, when.
  public static func audit(_ entries: ReportTable, context: Context) -> String {
    page("Audit", body: card("Audit trail (newest first)", table(entries)), context: context)
  }

  // MARK: Pieces

  /// Events per hour or day; each day's point opens that day's events (``searchLink(_:filter:search:)``);
  /// the range before (`previous`) drawn under it when given.
  static func lineChart(_ series: TimeSeries, previous: TimeSeries? = nil, context: Context) -> String {
    let labels = series.points.map { String(context.zone.iso($0.start).prefix(series.bucket == .hour ? 13 : 10)) }
    return SVG.lineChart(
      zip(labels, series.points).map { (label: $0, value: Double($1.count)) },
      title: "Events per \(series.bucket.rawValue)",
      links: series.bucket == .day ? labels.map { searchLink(context, filter: ["from": $0, "to": $0]) } : [],
      marks: positions(context.marks, starts: series.points.map(\.start)),
      previous: previous?.points.map { Double($0.count) } ?? [])
      + (previous == nil ? "" : legend) + markList(context)
  }

  /// What the lines of a chart with the range before are.
  static let legend =
    #"<p class="legend"><span class="key now"></span>this range <span class="key before"></span>the range before</p>"#

  /// A bar per row; `link`, given a row's name, opens the events it counts (no link for `(none)`).
  static func bars(_ list: CountList, link: ((String) -> String?)? = nil) -> String {
    guard !list.rows.isEmpty else { return #"<p class="empty">No data in this range.</p>"# }
    return SVG.bars(
      list.rows.map {
        (
          label: $0.name.isEmpty ? "(none)" : $0.name, value: Double($0.count),
          note: "\($0.count) · \($0.devices) devices · " + String(format: "%.1f%%", $0.share)
        )
      }, title: list.dimension, links: list.rows.map { row in row.name.isEmpty ? nil : link?(row.name) })
  }

  /// The search page with this page's filter, `filter` changed (`platform`, `from`, …) and
  /// `search`'s items: what a bar, a point or a row counts, listed.
  static func searchLink(_ context: Context, filter: [String: String] = [:], search: [(String, String)] = []) -> String
  {
    let items =
      context.queryItems.filter { filter[$0.0] == nil } + filter.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
      + search
    return "/dashboard/search?" + query(items)
  }

  static func table(_ table: ReportTable) -> String {
    var html = #"<div class="scroll"><table class="rows"><thead><tr>"#
    html += table.columns.map { "<th>\(SVG.escape($0))</th>" }.joined() + "</tr></thead><tbody>"
    for row in table.rows { html += "<tr>" + row.map { "<td>\(SVG.escape($0))</td>" }.joined() + "</tr>" }
    return html + "</tbody></table></div>"
  }

  /// A titled card; `csv`, a link to the same figures from the report API as CSV, beside the title.
  static func card(_ title: String, _ content: String, csv: String? = nil) -> String {
    let link = csv.map { #" <a class="csv" href="\#(SVG.escape($0))">CSV</a>"# } ?? ""
    return #"<section class="card"><h2>\#(SVG.escape(title))\#(link)</h2>\#(content)</section>"#
  }

  /// The report API's CSV of `report` with this page's filter and `items` (what a card shows).
  static func csvLink(_ context: Context, _ report: String, _ items: [(String, String)] = []) -> String {
    "/v1/reports/\(report)?"
      + [context.apiQuery, query(items + [("format", "csv")])].filter { !$0.isEmpty }
      .joined(separator: "&")
  }

  static func option(_ value: String, selected: Bool) -> String {
    #"<option value="\#(SVG.escape(value))"\#(selected ? " selected" : "")>\#(SVG.escape(value))</option>"#
  }

  static func hiddenFilter(_ context: Context) -> String {
    context.queryItems.map { #"<input type="hidden" name="\#($0.0)" value="\#(SVG.escape($0.1))">"# }.joined()
  }

  static func page(_ title: String, body: String, context: Context) -> String {
    var header = "<nav>"
    for page in context.pages {
      let filter = "?" + query(context.queryItems)
      header +=
        #"<a href="\#(page.path)\#(filter)"\#(page == context.page ? #" class="current""# : "")>\#(page.title)</a>"#
    }
    header += "</nav>"
    header += #"<form class="filter" method="get" action="\#(SVG.escape(context.path))"><label>App <select name="app">"#
    for app in context.apps { header += option(app, selected: app == context.app) }
    header +=
      #"</select></label><label>From <input type="date" name="from" value="\#(SVG.escape(context.from))"></label>"#
    header += #"<label>To <input type="date" name="to" value="\#(SVG.escape(context.to))"></label>"#
    header += environmentField(context)
    header += filterFields(context)
    header += "<button>Show</button></form>"
    header += #"<p class="range">\#(SVG.escape(context.rangeLine))\#(presetLinks(context))</p>"#
    if !context.csrf.isEmpty {
      header += #"<form class="signout" method="post" action="/logout">"#
      header +=
        #"<input type="hidden" name="csrf" value="\#(SVG.escape(context.csrf))"><button>Sign out</button></form>"#
    }
    header += environmentBanner(context)
    return document(title: "\(title) · \(context.app)", header: header, body: body + saveForm(context))
  }

  /// RFC 3986's unreserved characters: all a query value may hold unescaped (`2026-11-01` stays).
  private static let unreserved = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))

  static func percent(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
  }

  /// `items` as a query string (`app=ty&from=2026-11-01`), each value percent-encoded.
  static func query(_ items: [(String, String)]) -> String {
    items.map { "\($0.0)=\(percent($0.1))" }.joined(separator: "&")
  }

  /// A whole page: `header` above `body`, with the dashboard's style.
  public static func document(title: String, header: String, body: String) -> String {
    """
    <!doctype html><html lang="en"><head><meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>\(SVG.escape(title)) · CoreTracker</title><style>\(style)</style></head>
    <body><header><h1>CoreTracker</h1>\(header)</header><main>\(body)</main></body></html>
    """
  }

  static let style = """
    *{box-sizing:border-box}body{margin:0;font:15px/1.4 system-ui,sans-serif;color:#111;background:#f5f6f8}
    header{background:#fff;border-bottom:1px solid #ddd;padding:8px 16px}h1{font-size:18px;margin:4px 0}
    nav{display:flex;flex-wrap:wrap;gap:4px 12px;margin:6px 0}nav a{color:#2563eb;text-decoration:none}
    nav a.current{font-weight:600;color:#111}form{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:6px 0}
    label{display:flex;flex-direction:column;font-size:12px;color:#555}input,select,button{font:inherit;padding:4px}
    main{padding:12px;display:grid;gap:12px;max-width:1100px;margin:auto}
    .card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px;min-width:0}h2{font-size:15px;margin:0 0 8px}h2 a.csv{font-size:12px;font-weight:400;margin-left:8px}
    .figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(130px,1fr));gap:8px}
    .figure{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px;display:flex;flex-direction:column}
    a.figure{color:inherit;text-decoration:none}a.figure:hover,a.figure:focus{outline:2px solid #2563eb}.figure .name{font-size:12px;color:#555}.figure .value{font-size:22px;font-weight:600}.figure .change{font-size:12px;color:#555}
    svg.chart{width:100%;height:auto;display:block}.mark line{stroke:#d97706;stroke-dasharray:4 3}
    ul.marks{margin:6px 0;padding-left:20px;font-size:13px}ul.marks li{list-style:decimal}ul.marks .by{color:#555}.series{fill:none;stroke:#2563eb;stroke-width:2}
    .series.previous{stroke:#9ca3af;stroke-dasharray:5 4}.legend{font-size:13px;color:#555;margin:4px 0}
    .key{display:inline-block;width:18px;margin:0 4px 3px 0;border-top:2px solid #2563eb}.key.before{border-top:2px dashed #9ca3af;margin-left:10px}
    .point{fill:#2563eb}.axis{stroke:#999}svg .tick{font-size:13px;fill:#444}.tick.end{text-anchor:end}
    .bars{display:grid;gap:4px}.bars .row{display:grid;grid-template-columns:minmax(8ch,16em) 1fr minmax(10ch,auto);gap:4px 10px;align-items:center;color:inherit;text-decoration:none;padding:2px 4px;border-radius:4px}
    .bars a.row:hover,.bars a.row:focus{background:#eef2ff;outline:2px solid #2563eb}.bars .label{overflow-wrap:anywhere}.bars .note{font-size:13px;color:#444}
    .track{display:block;height:16px;background:#eef2ff;border-radius:3px}.bar{display:block;height:100%;background:#2563eb;border-radius:3px}
    .scroll{overflow-x:auto}table{border-collapse:collapse;font-size:13px}
    th,td{padding:4px 8px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}
    .heat td.cell{text-align:center;min-width:56px}.heat td.cell a{display:block;text-decoration:none}
    ul.units{columns:14em;margin:0;padding-left:1.2em}ul.units li{overflow-wrap:anywhere}
    .banner{background:#fef3c7;border:1px solid #f59e0b;color:#78350f;border-radius:6px;padding:6px 10px;margin:6px 0}.error{color:#b91c1c}.empty{color:#777}
    dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 12px;margin:0}dl.facts dt{color:#555}dl.facts dd{margin:0;overflow-wrap:anywhere}
    h3{font-size:14px;margin:10px 0 4px}ol.timeline{list-style:none;margin:0;padding:0}ol.timeline li{padding:3px 0;border-bottom:1px solid #eee;overflow-wrap:anywhere}
    ol.timeline time{color:#555;font-variant-numeric:tabular-nums}ol.timeline code{font-size:13px;color:#444}
    td.wrap{white-space:normal;word-break:break-word;min-width:20ch}form.inline{display:inline-flex;margin:0 4px 0 0}
    .live td.detail{white-space:normal;word-break:break-word;min-width:16ch}.live-quarantined td{color:#b91c1c}.live-drop td{color:#92400e}
    @media (max-width:600px){.bars .row{grid-template-columns:1fr auto}.bars .track{grid-column:1/-1;grid-row:2}
    svg .tick{font-size:24px}}
    @media (prefers-color-scheme:dark){body{color:#e5e7eb;background:#111827}header,.card,.figure{background:#1f2937;border-color:#374151}
    nav a,a{color:#93c5fd}nav a.current{color:#f9fafb}.figure .name,.figure .change,label,.bars .note,.empty{color:#9ca3af}
    svg .tick{fill:#d1d5db}th,td{border-color:#374151}.track,.bars a.row:hover{background:#374151}
    input,select,button{background:#111827;color:#e5e7eb;border:1px solid #4b5563}
    .banner{background:#422006;color:#fde68a;border-color:#b45309}.live-quarantined td,.error{color:#fca5a5}}
    """
}
