import Foundation
import PackagePlugin

/// Generates a product tracker's event types from its tracking plan on every build.
///
/// The plan of a target `TYTracker` is `Plans/TYTracker.json` in the package; its events become
/// `TYPlan` (the target's name without `Tracker`, then `Plan`): one `CoreTrackable` struct per
/// event (TrackingPlanCodegen). Changing the plan regenerates them, so a feature that sets a
/// parameter the plan no longer types that way stops compiling.
@main
struct TrackingPlanPlugin: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
    let plan = context.package.directoryURL.appending(components: "Plans", "\(target.name).json")
    guard FileManager.default.fileExists(atPath: plan.path) else {
      Diagnostics.error("\(target.name) uses TrackingPlanPlugin but has no plan at Plans/\(target.name).json")
      return []
    }
    let namespace = (target.name.hasSuffix("Tracker") ? String(target.name.dropLast(7)) : target.name) + "Plan"
    let output = context.pluginWorkDirectoryURL.appending(component: "\(namespace).swift")
    return [
      .buildCommand(
        displayName: "Generating \(namespace) from Plans/\(target.name).json",
        executable: try context.tool(named: "TrackingPlanCodegen").url,
        arguments: [plan.path, namespace, output.path], inputFiles: [plan], outputFiles: [output])
    ]
  }
}
