public import CollectorWire
import Foundation
public import TrackingPlan
import Yams

/// Tracking plan files: YAML (a plan is written and reviewed by people: comments, no braces) or
/// JSON, which is YAML too, decoded into ``TrackingPlan`` by one `Codable` declaration.
public enum PlanFiles {
  /// The plan in `text`; throws ``FieldError`` naming `source` and what is wrong.
  public static func plan(_ text: String, source: String) throws(FieldError) -> TrackingPlan {
    let plan: TrackingPlan
    do {
      plan = try YAMLDecoder().decode(TrackingPlan.self, from: text)
    } catch {
      throw FieldError(field: source, reason: "is not a tracking plan: \(Self.describe(error))")
    }
    do {
      try AppEnvironment.checkTarget(plan.app, field: "app")
    } catch {
      throw FieldError(field: source, reason: error.description)
    }
    guard AppEnvironment.split(plan.app).environment == nil else {
      throw FieldError(field: source, reason: "app: a plan is an app's, for every environment (\(plan.app))")
    }
    guard plan.version > 0 else { throw FieldError(field: source, reason: "version: must be 1 or more") }
    if let problem = plan.structureProblem { throw FieldError(field: source, reason: problem.description) }
    return plan
  }

  /// The plans in the files at `paths`; two files with the same app and version are an error.
  public static func load(_ paths: [String]) throws(FieldError) -> TrackingPlans {
    var plans: [TrackingPlan] = []
    for path in paths {
      guard let data = FileManager.default.contents(atPath: path) else {
        throw FieldError(field: path, reason: "cannot be read")
      }
      let plan = try plan(String(decoding: data, as: UTF8.self), source: path)
      if plans.contains(where: { $0.app == plan.app && $0.version == plan.version }) {
        throw FieldError(field: path, reason: "a second plan \(plan.app) v\(plan.version)")
      }
      plans.append(plan)
    }
    return TrackingPlans(plans)
  }

  /// A decoding error in words: the path to the field and what was expected.
  static func describe(_ error: any Error) -> String {
    switch error {
    case DecodingError.keyNotFound(let key, let context):
      return "\(path(context.codingPath + [key])) is required"
    case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
      DecodingError.dataCorrupted(let context):
      return "\(path(context.codingPath)): \(context.debugDescription)"
    default:
      return "\(error)"
    }
  }

  private static func path(_ keys: [any CodingKey]) -> String {
    keys.reduce(into: "") { path, key in
      if let index = key.intValue {
        path += "[\(index)]"
      } else {
        path += (path.isEmpty ? "" : ".") + key.stringValue
      }
    }
  }
}

extension CollectorConfiguration {
  /// `tracking-plans`: the plan files, loaded and checked at start.
  mutating func applyPlans(_ settings: SettingValues) throws(Problem) {
    guard let files = settings.value("tracking-plans") else { return }
    let paths = files.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    do {
      plans = try PlanFiles.load(paths)
    } catch {
      throw settings.fail("tracking-plans", error.description)
    }
  }
}
