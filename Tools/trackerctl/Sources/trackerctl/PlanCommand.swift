import ArgumentParser
import CollectorReports
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import TrackerCtlKit
import TrackingPlan

struct PlanCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "plan",
    abstract: "Tracking plans: check a file, compare two versions, or an app's events against its plan.",
    subcommands: [Check.self, Diff.self, Health.self])

  static func load(_ path: String) throws -> TrackingPlan {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ValidationError("\(path): cannot be read")
    }
    do {
      return try PlanFiles.plan(String(decoding: data, as: UTF8.self), source: path)
    } catch {
      throw ValidationError(error.description)
    }
  }

  struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Checks plan files as the collector will load them (YAML or JSON); exit 1 naming what is wrong.")
    @Argument(help: "The plan files.") var files: [String]

    func run() async throws {
      for file in files {
        let plan = try PlanCommand.load(file)
        let parameters = plan.events.values.reduce(0) { $0 + $1.parameters.count }
        print(
          "\(file): \(plan.app) v\(plan.version), \(plan.mode.rawValue), \(plan.events.count) events, \(parameters) parameters"
        )
      }
    }
  }

  struct Diff: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "What changed between two versions of a plan.")
    @Argument(help: "The older version.") var old: String
    @Argument(help: "The newer version.") var new: String

    func run() async throws {
      for line in PlanReview.diff(try PlanCommand.load(old), try PlanCommand.load(new)) { print(line) }
    }
  }

  struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Events seen but not in the plan, plan events never seen; with --quarantine, violations by reason.")
    @Option(help: "The plan file.") var plan: String
    @OptionGroup var origin: OriginOptions
    @OptionGroup var filter: FilterOptions
    @Flag(help: "Also list the quarantine's plan violations by reason (needs --url).") var quarantine = false

    func run() async throws {
      let plan = try PlanCommand.load(plan)
      var parameters = filter.parameters
      parameters["limit"] = "1000"
      let origin = try await origin.origin()
      let (_, result) = try await origin.report("top-events", parameters: parameters)
      guard let seen = result as? CountList else { throw ValidationError("top-events did not answer a list") }
      print(PlanHealth.health(plan, seen: seen).text(), terminator: "")
      guard quarantine else { return }
      let client = try QuarantineCommand.Remote.parse(
        (self.origin.url.map { ["--url", $0] } ?? []) + (self.origin.key.map { ["--key", $0] } ?? [])
          + ["--app", filter.app]
      ).client()
      let entries = try await client.list(app: filter.app, limit: 100_000)
      print("\n" + PlanHealth.violations(entries.flatMap(\.reasons)).text(), terminator: "")
    }
  }
}
