import ArgumentParser
import CollectorReports
import CollectorStore
import Foundation
import TrackerCtlKit

struct LoadCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "load",
    abstract:
      "Sends generated events to a collector's POST /v1/batch as fast as it answers; prints events/s and latency.")
  @Option(help: "The collector's base URL (or TRACKERCTL_URL).") var url: String?
  @Option(help: "A write key of the app to fill (or TRACKERCTL_WRITE_KEY).") var key: String?
  @Option(help: "Events in all.") var events = 100_000
  @Option(help: "Events per request (1 to 500).") var batch = 100
  @Option(help: "Requests in flight.") var concurrency = 8
  @Option(help: "Distinct devices.") var devices = 1_000

  func run() async throws {
    let environment = ProcessInfo.processInfo.environment
    guard let text = url ?? environment["TRACKERCTL_URL"], let base = URL(string: text), base.scheme != nil else {
      throw ValidationError("--url must be a collector's base URL, e.g. http://127.0.0.1:8080")
    }
    guard let key = key ?? environment["TRACKERCTL_WRITE_KEY"], !key.isEmpty else {
      throw ValidationError("--key must be a write key (or set TRACKERCTL_WRITE_KEY)")
    }
    let plan: LoadGenerator.Plan
    do {
      plan = try LoadGenerator.Plan(events: events, batchSize: batch, concurrency: concurrency, devices: devices)
    } catch let error as CommandError {
      throw ValidationError(error.description)
    }
    let showsProgress = isatty(2) == 1
    let summary = try await LoadGenerator(url: base, key: key, plan: plan).run { done, total in
      if showsProgress { FileHandle.standardError.write(Data(("\r" + TrackerCtl.progressBar(done, total)).utf8)) }
    }
    if showsProgress { FileHandle.standardError.write(Data("\n".utf8)) }
    print(summary.text, terminator: "")
    if summary.accepted < plan.events { throw ExitCode(1) }
  }
}
