import CollectorReports
import CollectorWire
import Foundation

/// The one filter every page reads: the app, the days (in the zone), the unit and the dimensions,
/// turned into the same ``ReportFilter`` the API builds from the same parameters, carried by every
/// link and form, and said in words on every page.
extension Dashboard.Context {
  /// The range the page covers: from the first day's midnight to the midnight after the last day
  /// (the To day is included), in ``zone``; `nil` when a day is not one.
  public var range: (from: Int64, to: Int64)? {
    guard let first = ReportTime.parse(from), let last = ReportTime.parse(to) else { return nil }
    return (zone.utc(local: first), zone.utc(local: last + 86_400_000))
  }

  /// The filter as query items, for links and forms: unset dimensions left out.
  public var queryItems: [(String, String)] {
    [
      ("app", app), ("from", from), ("to", to), ("unit", unit.rawValue), ("tz", zone.identifier),
      ("platform", platform), ("appVersion", appVersion), ("osVersion", osVersion),
      ("environment", environment == AppEnvironment.production ? "" : environment),
    ].filter { !$0.1.isEmpty }
  }

  /// The same filter as the report API's query: the range's exact ends (the API's `to` is not
  /// included, so it is the midnight after the To day).
  public var apiQuery: String {
    guard let range else { return "" }
    let items =
      [("app", app), ("from", String(range.from)), ("to", String(range.to)), ("unit", unit.rawValue)]
      + [("tz", zone.identifier), ("platform", platform), ("appVersion", appVersion), ("osVersion", osVersion)]
      + [("environment", environment == AppEnvironment.production ? "" : environment)]
    return Dashboard.query(items.filter { !$0.1.isEmpty })
  }

  /// The exact range in words: `2026-11-01T00:00:00+03:00 to 2026-11-08T00:00:00+03:00
  /// (Europe/Istanbul; the end not included) · iOS`.
  public var rangeLine: String {
    guard let range else { return "" }
    let dimensions = [
      platform, appVersion.isEmpty ? "" : "app \(appVersion)", osVersion.isEmpty ? "" : "OS \(osVersion)",
    ]
    .filter { !$0.isEmpty }
    return "\(zone.iso(range.from)) to \(zone.iso(range.to)) (\(zone.identifier); the end not included)"
      + (dimensions.isEmpty ? "" : " · " + dimensions.joined(separator: " · "))
  }
}

extension Dashboard {
  /// The environment picker: production and every environment the app has data in (and the one
  /// shown, should it have none yet).
  static func environmentField(_ context: Context) -> String {
    var names = context.environments.isEmpty ? [AppEnvironment.production] : context.environments
    if !names.contains(context.environment) { names.append(context.environment) }
    var field = #"<label>Environment <select name="environment">"#
    for name in names { field += option(name, selected: name == context.environment) }
    return field + "</select></label>"
  }

  /// The banner every page of an environment other than production wears, so that test data is
  /// never read as real users'.
  static func environmentBanner(_ context: Context) -> String {
    guard context.environment != AppEnvironment.production else { return "" }
    return #"<p class="banner" role="status">Environment: <strong>\#(SVG.escape(context.environment))</strong>"#
      + " · not production: these are test builds' events, kept apart from real users'.</p>"
  }

  /// The header's filter fields after the app and days: the dimensions, the zone, and the unit on
  /// the pages that count people or devices.
  static func filterFields(_ context: Context) -> String {
    var fields = ""
    for (name, label, value) in [
      ("platform", "Platform", context.platform), ("appVersion", "App version", context.appVersion),
      ("osVersion", "OS version", context.osVersion),
    ] {
      fields +=
        #"<label>\#(label) <input name="\#(name)" size="8" placeholder="all" value="\#(SVG.escape(value))"></label>"#
    }
    if context.page.countsUsers {
      fields += #"<label>Count <select name="unit">"#
      for unit in ReportUnit.allCases {
        fields +=
          #"<option value="\#(unit.rawValue)"\#(unit == context.unit ? " selected" : "")>\#(unit.title)</option>"#
      }
      fields += "</select></label>"
    } else {
      fields += #"<input type="hidden" name="unit" value="\#(context.unit.rawValue)">"#
    }
    fields += #"<label>Time zone <input name="tz" size="16" value="\#(SVG.escape(context.zone.identifier))"></label>"#
    return fields
  }
}

extension Dashboard {
  /// A page saying what went wrong (`title`, `message`: plain text), with the navigation to every
  /// page, so a bad parameter or an unknown page is never a dead end.
  public static func problem(title: String, message: String) -> String {
    let links = DashboardPage.allCases.filter { $0 != .audit }
      .map { #"<a href="\#($0.path)">\#($0.title)</a>"# }.joined()
    return document(
      title: title, header: "<nav>\(links)</nav>",
      body: #"<section class="card"><h2>\#(SVG.escape(title))</h2><p class="error">\#(SVG.escape(message))</p>"#
        + #"<p><a href="/">Back to the overview</a></p></section>"#)
  }
}

extension Dashboard {
  /// The ranges one click away, as days in the zone (the To day included): the last 7, 30 and 90
  /// days up to today, this month, the previous month, and the range just before the one shown.
  public static func presets(_ context: Context) -> [(name: String, from: String, to: String)] {
    guard let today = ReportTime.parse(context.today) else { return [] }
    let day: Int64 = 86_400_000
    func text(_ time: Int64) -> String { String(ReportTime.iso(time).prefix(10)) }
    let monthStart = ReportTime.parse(String(context.today.prefix(8)) + "01")!
    let previousMonthStart = ReportTime.parse(String(text(monthStart - day).prefix(8)) + "01")!
    var presets = [
      ("Last 7 days", text(today - 6 * day), context.today), ("Last 30 days", text(today - 29 * day), context.today),
      ("Last 90 days", text(today - 89 * day), context.today), ("This month", text(monthStart), context.today),
      ("Last month", text(previousMonthStart), text(monthStart - day)),
    ]
    if let first = ReportTime.parse(context.from), let last = ReportTime.parse(context.to), first <= last {
      presets.append(("Previous period", text(first - (last - first) - day), text(first - day)))
    }
    return presets.map { (name: $0.0, from: $0.1, to: $0.2) }
  }

  /// The presets as links that keep every other filter.
  static func presetLinks(_ context: Context) -> String {
    let links = presets(context).map { preset -> String in
      var target = context
      (target.from, target.to) = (preset.from, preset.to)
      return #"<a href="\#(SVG.escape(context.path))?\#(SVG.escape(query(target.queryItems)))">\#(preset.name)</a>"#
    }
    return links.isEmpty ? "" : #"<span class="presets"> · \#(links.joined(separator: " · "))</span>"#
  }
}

extension DashboardPage {
  /// Whether the page counts people or devices (active users, retention, funnels): only these
  /// offer the Count picker.
  public var countsUsers: Bool { self == .overview || self == .retention || self == .funnel }
}
