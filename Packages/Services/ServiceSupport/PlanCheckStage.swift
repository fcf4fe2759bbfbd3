import CollectorWire
public import CoreTracker
public import TrackingPlan
public import WireJSON

extension ParameterValue {
  /// The value as the native wire carries it: dates as ISO 8601 text, an object's keys in their
  /// order, a later duplicate key's value winning in the first one's place (``EventParameters``
  /// keeps keys unique anyway).
  public var wire: JSONValue {
    switch self {
    case .string(let text): return .string(text)
    case .int(let number): return .int(Int64(number))
    case .double(let number): return .double(number)
    case .bool(let flag): return .bool(flag)
    case .date(let date): return .string(ISO8601.string(from: date))
    case .list(let values): return .array(values.map(\.wire))
    case .object(let fields):
      var object = JSONObject()
      for field in fields { object[field.key] = field.value.wire }
      return .object(object)
    }
  }
}

/// Checks every event against the app's tracking plan on the device, as the collector will, and
/// says loudly what breaks it: for development builds (a product tracker adds it there).
///
/// It never drops: the collector decides (an enforcing plan quarantines the event, where it can be
/// replayed). It runs after the defaults are added, so the plan's ``TrackingPlan/common``
/// parameters are checked as the collector sees them.
public struct PlanCheckStage: PipelineStage {
  /// The plan.
  public let plan: TrackingPlan
  /// Where a violation is said (a tracker's ``TrackerConfiguration/warning``: standard error by default).
  public let report: @Sendable (String) -> Void

  /// A stage checking against `plan`, saying each violation to `report`.
  public init(plan: TrackingPlan, report: @escaping @Sendable (String) -> Void) {
    self.plan = plan
    self.report = report
  }

  public func process(_ event: inout TrackedEvent) -> StageDecision {
    var parameters = JSONObject()
    for parameter in event.parameters { parameters[parameter.key] = parameter.value.wire }
    if let problem = plan.problem(name: event.name, parameters: parameters) {
      report("CoreTracker: \(event.name) breaks the tracking plan: \(problem.description)")
    }
    return .keep
  }
}
