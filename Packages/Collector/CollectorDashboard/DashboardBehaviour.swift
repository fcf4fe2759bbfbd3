public import CollectorReports
import Foundation

/// The pages of how people behave: retention and funnels, each number opening the people or devices
/// behind it.
extension Dashboard {
  /// Weekly (or daily) cohorts as a heat table: darker is more retained; `note` says what part of
  /// the range they cover when not all of it. The start and return events are picked from the
  /// range's events (`top`). Each cell opens its people or devices; `cell` is the one opened (the
  /// cohort's start and the period), listed under the table.
  public static func retention(
    _ retention: Retention, note: String? = nil, cell: (cohort: Int64, offset: Int, units: UnitList)? = nil,
    top: CountList? = nil, context: Context
  ) -> String {
    let picked = [("startEvent", retention.events.start ?? ""), ("returnEvent", retention.events.back ?? "")]
      .filter { !$0.1.isEmpty }
    var body = retentionPickers(retention.events, top: top, context: context)
    let width = retention.cohorts.map(\.retained.count).max() ?? 0
    var html = #"<div class="scroll"><table class="heat"><thead><tr><th>Cohort</th><th>\#(retention.unit.title)</th>"#
    for index in 0..<width { html += "<th>\(retention.period.rawValue) \(index)</th>" }
    html += "</tr></thead><tbody>"
    for cohort in retention.cohorts {
      let day = String(context.zone.iso(cohort.start).prefix(10))
      html += "<tr><th>\(day)</th><td>\(cohort.size)</td>"
      for (offset, share) in cohort.retained.enumerated() {
        let alpha = String(format: "%.2f", 0.08 + 0.92 * share / 100)
        let link =
          "\(context.path)?" + query(context.queryItems + picked + [("cohort", day), ("offset", String(offset))])
        html +=
          #"<td class="cell" style="background: rgba(37, 99, 235, \#(alpha))"><a href="\#(SVG.escape(link))" "#
          + #"style="color: \#(share > 55 ? "#fff" : "#111")" title="\#(cohort.active[offset]) \#(retention.unit.plural)">"#
          + String(format: "%.0f%%", share) + "</a></td>"
      }
      html += "</tr>"
    }
    html += "</tbody></table></div>"
    if retention.cohorts.isEmpty { html = #"<p class="empty">No one did the start event in this range.</p>"# }
    body += card(
      "Share of each cohort active in each following \(retention.period.rawValue)" + (note.map { " (\($0))" } ?? ""),
      html, csv: csvLink(context, "retention", [("period", retention.period.rawValue)] + picked))
    if let cell {
      let day = context.zone.iso(cell.cohort).prefix(10)
      body += card(
        "Cohort of \(day), \(retention.period.rawValue) \(cell.offset): \(cell.units.count) \(cell.units.unit.plural)",
        unitList(cell.units, context: context),
        csv: csvLink(
          context, "retained",
          [("period", retention.period.rawValue)] + picked + [("cohort", String(day)), ("offset", String(cell.offset))])
      )
    }
    return page("Retention", body: body, context: context)
  }

  /// The start and return event pickers, fed by the range's events (`top`): any event by default.
  private static func retentionPickers(_ events: RetentionEvents, top: CountList?, context: Context) -> String {
    guard let top else { return "" }
    let names = top.rows.map(\.name).filter { !$0.isEmpty }
    var form = #"<form class="pick" method="get" action="/dashboard/retention">\#(hiddenFilter(context))"#
    form += eventPicker("Starts with", name: "startEvent", empty: "any event", chosen: events.start ?? "", names: names)
    form += eventPicker(
      "Comes back to", name: "returnEvent", empty: "any event", chosen: events.back ?? "", names: names)
    return form + "<button>Show</button></form>"
  }

  /// A labelled picker of the range's event `names`, `chosen` selected (kept when the range lacks
  /// it), `empty` the choice of none.
  private static func eventPicker(_ label: String, name: String, empty: String, chosen: String, names: [String])
    -> String
  {
    #"<label>\#(SVG.escape(label)) <select name="\#(name)"><option value="">\#(empty)</option>"#
      + (names.contains(chosen) || chosen.isEmpty ? names : [chosen] + names).map {
        option($0, selected: $0 == chosen)
      }.joined() + "</select></label>"
  }

  /// What the funnel page shows beyond the picked steps: the funnel, how it was gone through (or
  /// why not), and the step whose drop-offs are listed.
  public struct FunnelView: Sendable {
    /// The funnel of the picked steps, `nil` when fewer than two are picked.
    public var funnel: Funnel?
    /// Times to each step and the drop-offs asked for; `nil` with ``pathsProblem`` when refused.
    public var paths: FunnelPaths?
    /// Why the times are not shown (a range with too many step events).
    public var pathsProblem: String?
    /// The step (1 is the second) whose drop-offs are listed.
    public var droppedAt: Int?

    /// A view.
    public init(funnel: Funnel?, paths: FunnelPaths? = nil, pathsProblem: String? = nil, droppedAt: Int? = nil) {
      self.funnel = funnel
      self.paths = paths
      self.pathsProblem = pathsProblem
      self.droppedAt = droppedAt
    }
  }

  /// People or devices reaching each step, with conversion, drop-off and the median time from the
  /// first step; each step's drop-off opens who dropped. The steps are picked from the range's events
  /// (`top`), one picker per step and one more to add a step, up to ``Funnel/mostSteps``;
  /// `isDefault` says they are the app's most common events, not the viewer's.
  public static func funnel(
    _ view: FunnelView, steps: [String], window: String, top: CountList, isDefault: Bool = false, context: Context
  ) -> String {
    var body = funnelPickers(steps: steps, window: window, top: top, context: context)
    if isDefault, !steps.isEmpty {
      body += #"<p class="empty">The app's most common events, most common first: pick your own steps above.</p>"#
    }
    guard let funnel = view.funnel else {
      return page(
        "Funnel", body: body + card("Funnel", "<p>Pick two to \(Funnel.mostSteps) events, in order.</p>"),
        context: context)
    }
    let times = view.paths?.medianTimes ?? []
    let rows = funnel.steps.enumerated().map { index, step in
      let time = index > 0 && index < times.count ? times[index].map { ", median \(duration($0)) from step 1" } : nil
      return (
        label: step.name, value: Double(step.devices),
        note: "\(step.devices) \(funnel.unit.plural), " + String(format: "%.1f%% of the first step", step.conversion)
          + (step.dropOff > 0 ? String(format: ", %.1f%% dropped", step.dropOff) : "") + (time ?? "")
      )
    }
    let stepQuery = steps.map { ("step", $0) } + [("window", window)]
    let links = funnel.steps.indices.map { index -> String? in
      guard index > 0, funnel.steps[index].dropOff > 0 else { return nil }
      return "/dashboard/funnel?" + query(context.queryItems + stepQuery + [("dropped", String(index))])
    }
    let csv = csvLink(context, "funnel", [("steps", steps.joined(separator: ",")), ("window", window)])
    body += card("Funnel", SVG.bars(rows, title: "Funnel", links: links) + funnelNote(view), csv: csv)
    if let droppedAt = view.droppedAt, let dropped = view.paths?.dropped, droppedAt < steps.count {
      body += card(
        "Reached \(steps[droppedAt - 1]), not \(steps[droppedAt]): \(dropped.count) \(dropped.unit.plural)",
        unitList(dropped, context: context),
        csv: csvLink(
          context, "funnel-dropped",
          [("steps", steps.joined(separator: ",")), ("window", window), ("dropped", String(droppedAt))]))
    }
    return page("Funnel", body: body, context: context)
  }

  /// The pickers: one per step, fed by the range's events, one more to add a step, and the window.
  private static func funnelPickers(steps: [String], window: String, top: CountList, context: Context) -> String {
    var body = #"<form class="pick steps" method="get" action="/dashboard/funnel">\#(hiddenFilter(context))"#
    let names = top.rows.map(\.name).filter { !$0.isEmpty }
    for index in 0..<min(Funnel.mostSteps, steps.count + 1) {
      body += eventPicker(
        "Step \(index + 1)", name: "step", empty: index < 2 ? "pick an event" : "(none)",
        chosen: index < steps.count ? steps[index] : "", names: names)
    }
    return body
      + #"<label>Window <input name="window" value="\#(SVG.escape(window))" size="5"></label><button>Show</button></form>"#
  }

  /// What the funnel card says under its bars: how to open the drop-offs, or why times are missing.
  private static func funnelNote(_ view: FunnelView) -> String {
    if let problem = view.pathsProblem {
      return #"<p class="empty">No times to convert or drop-off lists: \#(SVG.escape(problem)).</p>"#
    }
    return #"<p class="empty">A step with drop-offs opens who reached the step before it and not it.</p>"#
  }

  /// People or devices, each opening their page; how many more there are when not all are listed.
  static func unitList(_ list: UnitList, context: Context) -> String {
    guard !list.units.isEmpty else { return #"<p class="empty">None.</p>"# }
    var html = #"<ul class="units">"#
    for unit in list.units {
      let (field, id) = list.profile(of: unit)
      let name = list.unit == .person && field == "device" ? "device \(id)" : id
      html += #"<li><a href="\#(SVG.escape(profileLink(context, field, id)))">\#(SVG.escape(name))</a></li>"#
    }
    html += "</ul>"
    if list.count > Int64(list.units.count) {
      html += #"<p class="empty">The first \#(list.units.count) of \#(list.count), by id.</p>"#
    }
    return html
  }

  /// A duration for a reader: `850 ms`, `42 s`, `3 min 20 s`, `2 h 5 min`, `1 d 3 h`.
  static func duration(_ milliseconds: Int64) -> String {
    let seconds = milliseconds / 1000
    switch milliseconds {
    case ..<1000: return "\(milliseconds) ms"
    case ..<60_000: return "\(seconds) s"
    case ..<3_600_000: return "\(seconds / 60) min \(seconds % 60) s"
    case ..<86_400_000: return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    default: return "\(seconds / 86_400) d \(seconds % 86_400 / 3600) h"
    }
  }
}
