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
      """
  )

  @Option(help: "A JSON file of settings ({\"port\": 9000, \"write-keys\": \"app=key\"}).") var config: String?
  @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
  @Option(help: "Port to listen on (default 8080; 0 picks a free port).") var port: String?
  @Option(help: "sqlite or postgres (default sqlite; postgres when --postgres-url is set).") var storage: String?
  @Option(help: "The SQLite file (default collector-data/collector.sqlite).") var sqlitePath: String?
  @Option(help: "full (default) or normal.") var sqliteDurability: String?
  @Option(help: "postgres://user:password@host:5432/database") var postgresUrl: String?
  @Option(help: "The PostgreSQL schema (default public).") var postgresSchema: String?
  @Option(help: "Write keys: app=key[,app=key...].") var writeKeys: String?
  @Option(help: "Admin keys: key[,key...].") var adminKeys: String?
  @Option(help: "Events per second per key; 0 for none (default 20000).") var rateLimit: String?
  @Option(help: "Reject events older than this many days (default 30).") var maxEventAgeDays: String?
  @Option(help: "Delete events older than this many days (default: keep).") var retentionDays: String?
  @Option(help: "Per-app retention: app=days[,app=days...].") var retention: String?
  @Option(help: "Rows waiting to commit before answering 503 (default 200000).") var maxQueuedRows: String?
  @Option(help: "true to serve /bench/body and /bench/jsondecoder.") var benchmarkRoutes: String?
  @Option(help: "Seconds a request may take to arrive, head to body end (default 30).") var readTimeout: String?
  @Option(help: "Seconds an idle connection is kept open (default 60).") var idleTimeout: String?
  @Option(help: "Connections open at once; more wait for a free one (default 1000).") var maxConnections: String?
  @Option(help: "Log level: trace, debug, info, notice, warning, error (default info).") var logLevel: String?

  func run() async throws {
    let given: [(String, String?)] = [
      ("config", config), ("host", host), ("port", port), ("storage", storage), ("sqlite-path", sqlitePath),
      ("sqlite-durability", sqliteDurability), ("postgres-url", postgresUrl), ("postgres-schema", postgresSchema),
      ("write-keys", writeKeys), ("admin-keys", adminKeys), ("rate-limit", rateLimit),
      ("max-event-age-days", maxEventAgeDays), ("retention-days", retentionDays), ("retention", retention),
      ("max-queued-rows", maxQueuedRows), ("benchmark-routes", benchmarkRoutes), ("read-timeout", readTimeout),
      ("idle-timeout", idleTimeout), ("max-connections", maxConnections),
    ]
    let arguments = Dictionary(uniqueKeysWithValues: given.compactMap { key, value in value.map { (key, $0) } })
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
