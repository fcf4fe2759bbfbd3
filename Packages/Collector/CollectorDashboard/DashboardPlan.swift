public import CollectorReports
public import TrackingPlan

extension Dashboard {
  /// The Plan page: the app's tracking plan (the versions the collector holds, its mode), each
  /// event seen but not in the plan and each planned event never seen over the page's days, and the
  /// quarantine's plan violations by reason. Without a plan it says how to give one.
  public static func plan(
    _ plan: TrackingPlan?, versions: [Int], health: ReportTable?, violations: ReportTable, context: Context
  ) -> String {
    guard let plan, let health else {
      let text =
        "<p>\(SVG.escape(context.app)) has no tracking plan. Start the collector with "
        + "<code>--tracking-plans Plans/&lt;app&gt;.json</code> (Docs/TrackingPlan.md).</p>"
      return page("Plan", body: card("Tracking plan", text), context: context)
    }
    let held = versions.map { "v\($0)" }.joined(separator: ", ")
    var summary = "<p>\(SVG.escape(plan.app)) v\(plan.version) (\(plan.mode.rawValue)): \(plan.events.count) events."
    summary += " Versions held: \(SVG.escape(held)); an event passes when one of them accepts it.</p>"
    let problems = health.rows.filter { $0[1] != "planned" }
    var body = card("Tracking plan", summary)
    body += card(
      "Seen but not planned, planned but never seen",
      problems.isEmpty
        ? #"<p class="empty">Every event seen is planned, and every planned event was seen.</p>"#
        : table(ReportTable(columns: health.columns, rows: problems)))
    body += card(
      "Violations held in the quarantine",
      violations.rows.isEmpty ? #"<p class="empty">None held.</p>"# : table(violations))
    let planned = health.rows.filter { plan.events[$0[0]] != nil }
    body += card("Every planned event", table(ReportTable(columns: health.columns, rows: planned)))
    return page("Plan", body: body, context: context)
  }
}
