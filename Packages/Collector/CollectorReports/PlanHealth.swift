public import TrackingPlan

/// How an app's events compare with its tracking plan: what `trackerctl plan health` and the
/// dashboard's Plan page show.
public enum PlanHealth {
  /// The plan's health over the events `seen` (a top-events report of the app): each event seen
  /// but not in the plan, each planned event never seen, and each planned event seen, with counts.
  public static func health(_ plan: TrackingPlan, seen: CountList) -> ReportTable {
    let counts = Dictionary(seen.rows.map { ($0.name, $0.count) }, uniquingKeysWith: +)
    var rows: [[String]] = []
    for row in seen.rows where plan.events[row.name] == nil {
      rows.append([row.name, "not in the plan", String(row.count)])
    }
    for name in plan.events.keys.sorted() {
      rows.append([name, counts[name] == nil ? "never seen" : "planned", String(counts[name] ?? 0)])
    }
    return ReportTable(columns: ["event", "status", "events"], rows: rows)
  }

  /// The plan violations among quarantine reasons, by reason (the event's index taken out, so one
  /// reason counts every event it held).
  public static func violations(_ reasons: [String]) -> ReportTable {
    var counts: [String: Int] = [:]
    for reason in reasons where reason.contains("tracking plan") {
      let field = reason.split(separator: ".", maxSplits: 1).last.map(String.init) ?? reason
      counts[reason.hasPrefix("events[") ? field : reason, default: 0] += 1
    }
    let rows = counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { [$0.key, String($0.value)] }
    return ReportTable(columns: ["violation", "events"], rows: rows)
  }
}
