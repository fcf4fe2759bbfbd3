public import CollectorReports
public import TrackingPlan

/// What `trackerctl plan` says about plans: what changed between two versions, and how an app's
/// events compare with its plan.
public enum PlanReview {
  /// What changed from `old` to `new`, one line each: events added and removed, and per event the
  /// parameters added, removed or changed (type, required, values, range) and a changed kind.
  public static func diff(_ old: TrackingPlan, _ new: TrackingPlan) -> [String] {
    var lines = ["\(old.app) v\(old.version) → \(new.app) v\(new.version)"]
    if old.mode != new.mode { lines.append("mode: \(old.mode.rawValue) → \(new.mode.rawValue)") }
    for name in Set(old.events.keys).union(new.events.keys).sorted() {
      switch (old.events[name], new.events[name]) {
      case (nil, .some(let event)): lines.append("+ \(name) (\(event.parameters.map(\.name).joined(separator: ", ")))")
      case (.some, nil): lines.append("- \(name)")
      case (.some(let before), .some(let after)): lines += changes(name, before, after)
      case (nil, nil): break
      }
    }
    return lines.count == 1 ? lines + ["no change"] : lines
  }

  private static func changes(_ name: String, _ before: TrackingPlan.Event, _ after: TrackingPlan.Event) -> [String] {
    var lines: [String] = []
    if before.kind != after.kind {
      lines.append("~ \(name): kind \(before.kind ?? "event") → \(after.kind ?? "event")")
    }
    for parameter in after.parameters where before.parameter(named: parameter.name) == nil {
      lines.append("~ \(name): + \(parameter.name) (\(describe(parameter)))")
    }
    for parameter in before.parameters {
      guard let changed = after.parameter(named: parameter.name) else {
        lines.append("~ \(name): - \(parameter.name)")
        continue
      }
      if describe(changed) != describe(parameter) {
        lines.append("~ \(name): \(parameter.name) \(describe(parameter)) → \(describe(changed))")
      }
    }
    return lines
  }

  /// A parameter's rules in words: `number, required, ≥ 0`.
  static func describe(_ parameter: TrackingPlan.Parameter) -> String {
    var parts = [parameter.type.rawValue, parameter.required ? "required" : "optional"]
    func text(_ number: Double) -> String {
      number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
    if let minimum = parameter.minimum { parts.append("≥ \(text(minimum))") }
    if let maximum = parameter.maximum { parts.append("≤ \(text(maximum))") }
    if let values = parameter.values { parts.append("one of \(values.joined(separator: "|"))") }
    if parameter.personal { parts.append("personal") }
    return parts.joined(separator: ", ")
  }

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
