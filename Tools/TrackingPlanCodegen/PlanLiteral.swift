import TrackingPlan

/// The plan itself as a Swift expression, so that the app holds the plan its events were generated
/// from (a development build checks every event against it) without reading a file at run time.
enum PlanLiteral {
  static func expression(_ plan: TrackingPlan) -> String {
    var out = "TrackingPlan(\n"
    out += "    app: \(quoted(plan.app)), version: \(plan.version), mode: .\(plan.mode.rawValue),\n"
    out += "    events: [\n"
    for name in plan.events.keys.sorted() {
      let event = plan.events[name]!
      var arguments: [String] = []
      if let kind = event.kind { arguments.append("kind: \(quoted(kind))") }
      if let services = event.services {
        arguments.append("services: [\(services.map(quoted).joined(separator: ", "))]")
      }
      arguments.append("parameters: [\(event.parameters.map(parameter).joined(separator: ", "))]")
      out += "      \(quoted(name)): .init(\(arguments.joined(separator: ", "))),\n"
    }
    out += "    ],\n    common: [\(plan.common.map(parameter).joined(separator: ", "))])"
    return out
  }

  static func parameter(_ parameter: TrackingPlan.Parameter) -> String {
    var arguments = [quoted(parameter.name), "type: .\(parameter.type.rawValue)"]
    if parameter.required { arguments.append("required: true") }
    if let values = parameter.values { arguments.append("values: [\(values.map(quoted).joined(separator: ", "))]") }
    if let minimum = parameter.minimum { arguments.append("minimum: \(minimum)") }
    if let maximum = parameter.maximum { arguments.append("maximum: \(maximum)") }
    if parameter.personal { arguments.append("personal: true") }
    return ".init(\(arguments.joined(separator: ", ")))"
  }

  /// `text` as a Swift raw string literal (`#"…"#`, with as many `#` as it needs); the plan's
  /// names and values hold no control character (``TrackingPlan/structureProblem``).
  static func quoted(_ text: String) -> String {
    var hashes = "#"
    while text.contains("\"" + hashes) { hashes += "#" }
    return hashes + "\"" + text + "\"" + hashes
  }
}
