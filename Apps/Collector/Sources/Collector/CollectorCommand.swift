import ArgumentParser
import CollectorServer
import Foundation
import Hummingbird
import Logging

/// `swift run collector`: the self-hosted collector. Every option also reads from a JSON file
/// (`--config`) and the environment (`COLLECTOR_<OPTION>`); the command line wins.
@main
struct CollectorCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "collector",
    abstract: "The CoreTracker collector: ingests events over HTTP into SQLite or PostgreSQL.",
    discussion: """
      Settings come from defaults, then a JSON file (--config or COLLECTOR_CONFIG), then the environment \
      (COLLECTOR_HOST, COLLECTOR_POSTGRES_URL, ...), then these options. SIGTERM or SIGINT stops accepting, \
      finishes requests, commits and exits.

      SETTINGS (--name value, --name=value; environment COLLECTOR_NAME):
      """ + CollectorServer.CollectorConfiguration.settings.map { "\n  --\($0.key): \($0.help)" }.joined()
  )

  @Option(help: "A JSON file of settings ({\"port\": 9000, \"write-keys\": \"app=key\"}).") var config: String?
  @Option(help: "Log level: trace, debug, info, notice, warning, error (default info).") var logLevel: String?
  /// Every other option: the settings, declared once in `CollectorConfiguration.settings`.
  @Argument(parsing: .allUnrecognized, help: "Settings, --name value (listed above).") var settings: [String] = []

  func run() async throws {
    var arguments: [String: String]
    do {
      arguments = try CollectorServer.CollectorConfiguration.arguments(settings)
    } catch {
      throw ValidationError(error.description)
    }
    if let config { arguments["config"] = config }
    let resolved: CollectorServer.CollectorConfiguration
    do {
      resolved = try CollectorServer.CollectorConfiguration.resolve(
        arguments: arguments, environment: ProcessInfo.processInfo.environment
      )
    } catch {
      throw ValidationError(error.description)
    }
    let levelText = logLevel ?? ProcessInfo.processInfo.environment["COLLECTOR_LOG_LEVEL"] ?? "info"
    guard let level = Logger.Level(rawValue: levelText) else {
      throw ValidationError("--log-level must be trace, debug, info, notice, warning or error, not \"\(levelText)\"")
    }
    var logger = Logger(label: "collector")
    logger.logLevel = level
    let (collector, report) = try await EventCollector.open(resolved, logger: logger)
    for line in report.lines { say(line) }
    let host = resolved.host
    let app = collector.application { port in
      say("collector listening on http://\(host):\(port)")
      say("  POST /v1/batch  ·  POST /v1/simple-analytics?key=  ·  GET /health  ·  GET /metrics")
    }
    try await app.runService()
  }
}

/// Prints a line unbuffered (the port line is read by scripts and tests while the server runs).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
