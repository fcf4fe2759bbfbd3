public import CollectorWire
public import WireJSON

extension TrackingPlan {
  /// The first way the event `name` with `parameters` breaks this plan, its field relative to the
  /// event (`name`, `parameters.price`), or `nil`: an event the plan does not list, a parameter it
  /// does not list (among the event's or the ``common`` ones), a required one missing, a value of
  /// the wrong type, not among the allowed values or out of range.
  public func problem(name: String, parameters: JSONObject) -> FieldError? {
    guard let event = events[name] else {
      return FieldError(field: "name", reason: "\(name) is not in the tracking plan (\(app) v\(version))")
    }
    for (key, value) in parameters {
      guard let planned = event.parameter(named: key) ?? common.first(where: { $0.name == key }) else {
        return FieldError(field: "parameters.\(key)", reason: "is not in the tracking plan (\(app) v\(version))")
      }
      if let reason = planned.problem(value) {
        return FieldError(field: "parameters.\(key)", reason: "\(reason) (tracking plan \(app) v\(version))")
      }
    }
    for planned in event.parameters where planned.required && parameters[planned.name] == nil {
      return FieldError(field: "parameters.\(planned.name)", reason: "is required (tracking plan \(app) v\(version))")
    }
    return nil
  }
}

extension TrackingPlan {
  /// The first thing that makes this plan unusable, or `nil`: an event or parameter name that is
  /// not a name events can carry (``EventRules/isName(_:)``), an allowed value or a service with a
  /// control character, or a parameter listed twice.
  public var structureProblem: FieldError? {
    for (name, event) in events.sorted(by: { $0.key < $1.key }) {
      guard EventRules.isName(name) else { return FieldError(field: "events.\(name)", reason: EventRules.nameRule) }
      if let problem = Self.problem(in: event.parameters, at: "events.\(name).parameters") { return problem }
      for service in event.services ?? [] where !EventRules.isName(service) {
        return FieldError(field: "events.\(name).services", reason: EventRules.nameRule)
      }
    }
    return Self.problem(in: common, at: "common")
  }

  private static func problem(in parameters: [Parameter], at path: String) -> FieldError? {
    var seen: Set<String> = []
    for (index, parameter) in parameters.enumerated() {
      guard EventRules.isName(parameter.name) else {
        return FieldError(field: "\(path)[\(index)].name", reason: EventRules.nameRule)
      }
      guard seen.insert(parameter.name).inserted else {
        return FieldError(field: "\(path)[\(index)].name", reason: "\(parameter.name) is listed twice")
      }
      for value in parameter.values ?? [] where CollectorLimits.hasControlCharacter(value) {
        return FieldError(field: "\(path)[\(index)].values", reason: EventRules.controlRule)
      }
    }
    return nil
  }
}

extension TrackingPlan.Parameter {
  /// Why `value` does not fit this parameter, or `nil`.
  func problem(_ value: JSONValue) -> String? {
    let number: Double?
    switch (type, value) {
    case (.string, .string(let text)): return allows(text) ? nil : "must be one of \(list)"
    case (.integer, .int(let whole)): number = Double(whole)
    case (.number, .int(let whole)): number = Double(whole)
    case (.number, .double(let fraction)): number = fraction
    case (.boolean, .bool), (.list, .array), (.object, .object): return nil
    default: return "must be \(type.article), not \(value.typeName)"
    }
    guard let number else { return nil }
    if let minimum, number < minimum { return "must be at least \(Self.text(minimum))" }
    if let maximum, number > maximum { return "must be at most \(Self.text(maximum))" }
    if let values, !values.contains(where: { Double($0) == number }) { return "must be one of \(list)" }
    return nil
  }

  private func allows(_ text: String) -> Bool { values.map { $0.contains(text) } ?? true }

  private var list: String { (values ?? []).joined(separator: ", ") }

  private static func text(_ number: Double) -> String {
    number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
  }
}

extension TrackingPlan.ValueType {
  /// The type in a sentence: `a string`, `an integer`.
  var article: String { self == .integer || self == .object ? "an \(rawValue)" : "a \(rawValue)" }
}

/// Every version of every app's plan the collector holds.
///
/// An event passes when one version of its app's plan accepts it (an app built against an older
/// version keeps sending that version's events); otherwise the newest version says why. An app
/// without a plan accepts everything.
public struct TrackingPlans: Sendable, Hashable {
  /// The versions of each app's plan, newest first.
  public private(set) var byApp: [String: [TrackingPlan]]

  /// The plans given.
  public init(_ plans: [TrackingPlan] = []) {
    byApp = Dictionary(grouping: plans, by: \.app).mapValues { $0.sorted { $0.version > $1.version } }
  }

  /// Whether no app has a plan.
  public var isEmpty: Bool { byApp.isEmpty }

  /// The mode of `app`'s newest plan (`app` may name an environment), `nil` without a plan.
  public func mode(of app: String) -> TrackingPlan.Mode? { byApp[AppEnvironment.split(app).app]?.first?.mode }

  /// What the plans say about one event of `app` (the write key's target; its environment is
  /// ignored: every environment is held to the app's plan): `nil` when it passes or the app has no
  /// plan, else the newest version's reason and what to do with it.
  public func verdict(app: String, name: String, parameters: JSONObject) -> (
    problem: FieldError, mode: TrackingPlan.Mode
  )? {
    guard let versions = byApp[AppEnvironment.split(app).app], let newest = versions.first else { return nil }
    var first: FieldError?
    for plan in versions {
      guard let problem = plan.problem(name: name, parameters: parameters) else { return nil }
      first = first ?? problem
    }
    return first.map { ($0, newest.mode) }
  }
}
