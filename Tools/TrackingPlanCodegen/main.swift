import Foundation
import TrackingPlan

// TrackingPlanCodegen <plan.json> <Namespace> <output.swift>: the tracking plan's events as Swift
// (SwiftEvents). Run by the TrackingPlanPlugin build tool on every build of a product tracker.
let arguments = CommandLine.arguments
guard arguments.count == 4 else {
  FileHandle.standardError.write(Data("usage: TrackingPlanCodegen <plan.json> <Namespace> <output.swift>\n".utf8))
  exit(2)
}
do {
  let plan = try JSONDecoder().decode(TrackingPlan.self, from: Data(contentsOf: URL(fileURLWithPath: arguments[1])))
  if let problem = plan.structureProblem {
    FileHandle.standardError.write(Data("error: \(arguments[1]): \(problem)\n".utf8))
    exit(1)
  }
  let source = SwiftEvents.source(of: plan, namespace: arguments[2])
  try Data(source.utf8).write(to: URL(fileURLWithPath: arguments[3]), options: .atomic)
} catch {
  FileHandle.standardError.write(Data("error: \(arguments[1]): is not a tracking plan: \(error)\n".utf8))
  exit(1)
}
