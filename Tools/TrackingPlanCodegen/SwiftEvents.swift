import TrackingPlan

/// The Swift source of a plan's events: one `CoreTrackable` struct per event, its parameters typed
/// stored properties, in a namespace enum.
///
/// A feature builds the generated struct, so a parameter whose type the plan changes no longer
/// compiles where it is set; the event's name and kind are the plan's, never written again.
enum SwiftEvents {
  static func source(of plan: TrackingPlan, namespace: String) -> String {
    var out = "// Generated from the tracking plan \(plan.app) v\(plan.version) by TrackingPlanCodegen. Do not edit.\n"
    out += "public import CoreTracker\npublic import TrackingPlan\n\n"
    out += "/// The events of the tracking plan \(plan.app) v\(plan.version).\n"
    out += "public enum \(namespace) {\n"
    out += "  /// The plan's version these types were generated from.\n"
    out += "  public static let version = \(plan.version)\n"
    out += "  /// The plan itself: what a development build checks every event against.\n"
    out += "  public static let plan = \(PlanLiteral.expression(plan))\n"
    for name in plan.events.keys.sorted() {
      out += "\n" + event(name, plan.events[name]!)
    }
    return out + "}\n"
  }

  static func event(_ name: String, _ event: TrackingPlan.Event) -> String {
    let type = typeName(name)
    var out = "  /// `\(name)`" + (event.description.map { ": \(oneLine($0))" } ?? "") + "\n"
    if let owner = event.owner { out += "  ///\n  /// Owner: \(oneLine(owner)).\n" }
    out += "  public struct \(type): CoreTrackable, Sendable, Equatable {\n"
    for parameter in event.parameters {
      if let description = parameter.description { out += "    /// \(oneLine(description))\n" }
      out += "    public var \(propertyName(parameter.name)): \(swiftType(parameter))\n"
    }
    let arguments = event.parameters.map { parameter in
      "\(propertyName(parameter.name)): \(swiftType(parameter))" + (parameter.required ? "" : " = nil")
    }
    out += "\n    /// The event, its parameters as the plan declares them.\n"
    out += "    public init(\(arguments.joined(separator: ", "))) {\n"
    for parameter in event.parameters {
      let property = propertyName(parameter.name)
      out += "      self.\(property) = \(property)\n"
    }
    out += "    }\n\n"
    out += "    public var name: String { \(PlanLiteral.quoted(name)) }\n"
    out += "    public var kind: EventKind { .\(kind(event.kind)) }\n"
    out += "    public var parameters: EventParameters {\n      var parameters = EventParameters()\n"
    for parameter in event.parameters {
      let property = propertyName(parameter.name)
      let set =
        "parameters.set(EventParameter(key: \(PlanLiteral.quoted(parameter.name)), value: \(wrapped(parameter, property))"
        + (parameter.personal ? ", isPersonal: true))" : "))")
      out += parameter.required ? "      \(set)\n" : "      if let \(property) { \(set) }\n"
    }
    out += "      return parameters\n    }\n"
    if let services = event.services {
      let list = services.map { "ServiceID(rawValue: \(PlanLiteral.quoted($0)))" }.joined(separator: ", ")
      out += "    public var services: ServiceSelection { .only([\(list)]) }\n"
    }
    return out + "  }\n"
  }

  /// `text` on one line, for a doc comment.
  static func oneLine(_ text: String) -> String {
    String(text.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
  }

  static func swiftType(_ parameter: TrackingPlan.Parameter) -> String {
    let base =
      switch parameter.type {
      case .string: "String"
      case .integer: "Int"
      case .number: "Double"
      case .boolean: "Bool"
      case .list: "[ParameterValue]"
      case .object: "EventParameters"
      }
    return parameter.required ? base : base + "?"
  }

  static func wrapped(_ parameter: TrackingPlan.Parameter, _ property: String) -> String {
    switch parameter.type {
    case .string: ".string(\(property))"
    case .integer: ".int(\(property))"
    case .number: ".double(\(property))"
    case .boolean: ".bool(\(property))"
    case .list: ".list(\(property))"
    case .object: ".object(\(property))"
    }
  }

  static func kind(_ kind: String?) -> String {
    switch kind {
    case "screen", "screen_view": "screenView"
    case "action": "action"
    default: "event"
    }
  }

  /// `product_detail_viewed` → `ProductDetailViewed`.
  static func typeName(_ name: String) -> String {
    words(name).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
  }

  /// `product_id` → `productID`, `item_count` → `itemCount`.
  static func propertyName(_ name: String) -> String {
    let parts = words(name)
    guard let first = parts.first else { return "value" }
    let rest = parts.dropFirst().map { $0 == "id" ? "ID" : $0.prefix(1).uppercased() + $0.dropFirst() }
    let joined = first.lowercased() + rest.joined()
    return joined.first?.isNumber == true ? "_" + joined : joined
  }

  private static func words(_ name: String) -> [String] {
    name.split { !$0.isLetter && !$0.isNumber }.map(String.init)
  }
}
