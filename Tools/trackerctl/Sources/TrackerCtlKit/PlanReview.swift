public import TrackingPlan

/// What changed between two versions of a plan (`trackerctl plan diff`); how an app's events
/// compare with its plan is ``PlanHealth``'s.
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
}
