import ArgumentParser
import CollectorReports
import CollectorStore
import Foundation
import TrackerCtlKit

/// `trackerctl`: reports, keys and exports from the terminal, over a collector's HTTP API or its
/// store directly.
@main
struct TrackerCtlCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "trackerctl",
    abstract: "Reports, keys and exports of a CoreTracker collector.",
    discussion: """
      Reads a running collector (--url with --key, an admin key; or TRACKERCTL_URL and TRACKERCTL_KEY) \
      or its store directly (--sqlite FILE, or --postgres-url URL).
      """,
    subcommands: [ReportCommand.self, TailCommand.self, ExportCommand.self, KeysCommand.self, LoadCommand.self]
  )
}

/// Where to read.
struct OriginOptions: ParsableArguments {
  @Option(help: "A collector's base URL, e.g. http://127.0.0.1:8080 (or TRACKERCTL_URL).") var url: String?
  @Option(help: "An admin key for --url (or TRACKERCTL_KEY).") var key: String?
  @Option(help: "A collector's SQLite file, read directly.") var sqlite: String?
  @Option(help: "A collector's PostgreSQL database, read directly.") var postgresUrl: String?
  @Option(help: "The PostgreSQL schema (default public).") var postgresSchema = "public"

  /// The store named by --sqlite or --postgres-url, if any.
  func store() async throws -> (any EventStore & ReportQuerying)? {
    if let sqlite { return try await Stores.sqlite(sqlite) }
    if let postgresUrl { return try await Stores.postgres(postgresUrl, schema: postgresSchema) }
    return nil
  }

  func origin() async throws -> ReportOrigin {
    if let store = try await store() { return .store(Reports(store: store)) }
    let environment = ProcessInfo.processInfo.environment
    guard let text = url ?? environment["TRACKERCTL_URL"], let base = URL(string: text), base.scheme != nil else {
      throw ValidationError("say where to read: --url (with --key), --sqlite or --postgres-url")
    }
    guard let key = key ?? environment["TRACKERCTL_KEY"], !key.isEmpty else {
      throw ValidationError("--url needs --key (an admin key) or TRACKERCTL_KEY")
    }
    return .http(base, key: key)
  }
}

/// The range and filters every report takes.
struct FilterOptions: ParsableArguments {
  @Option(help: "The app (its write key's app).") var app: String
  @Option(help: "First day or time: 2026-11-01, 2026-11-01T10:00:00Z or ms (default: 7 days before --to).")
  var from: String?
  @Option(help: "End, not included (default: now).") var to: String?
  @Option(help: "Only this platform.") var platform: String?
  @Option(help: "Only this app version.") var appVersion: String?
  @Option(help: "Only this OS version.") var osVersion: String?

  var parameters: [String: String] {
    let pairs: [(String, String?)] = [
      ("app", app), ("from", from), ("to", to), ("platform", platform), ("appVersion", appVersion),
      ("osVersion", osVersion),
    ]
    return Dictionary(uniqueKeysWithValues: pairs.compactMap { key, value in value.map { (key, $0) } })
  }
}

struct ReportCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "report", abstract: "Prints a report: \(Reports.names.joined(separator: ", ")).")

  @Argument(help: "The report.") var name: String
  @OptionGroup var origin: OriginOptions
  @OptionGroup var filter: FilterOptions
  @Option(help: "events, timeseries, parameter-values: the event.") var event: String?
  @Option(help: "timeseries: hour or day.") var bucket: String?
  @Option(help: "retention: day or week.") var period: String?
  @Option(help: "retention: app-version.") var split: String?
  @Option(help: "breakdown: platform, os-version or app-version.") var by: String?
  @Option(help: "parameter-values: the parameter.") var parameter: String?
  @Option(help: "funnel: event names, comma-separated.") var steps: String?
  @Option(help: "funnel: 30m, 2h, 1d.") var window: String?
  @Option(help: "top-events, events, parameter-values: rows.") var limit: String?
  @Option(help: "events: the cursor a page printed.") var after: String?
  @Flag(help: "Print the API's JSON.") var json = false
  @Flag(help: "Print CSV.") var csv = false

  func validate() throws {
    guard Reports.names.contains(name) else {
      throw ValidationError("\"\(name)\" is not a report; reports: \(Reports.names.joined(separator: ", "))")
    }
    guard !(json && csv) else { throw ValidationError("--json or --csv, not both") }
  }

  func run() async throws {
    var parameters = filter.parameters
    let extra: [(String, String?)] = [
      ("event", event), ("bucket", bucket), ("period", period), ("split", split), ("by", by),
      ("parameter", parameter), ("steps", steps), ("window", window), ("limit", limit), ("after", after),
    ]
    for (key, value) in extra { if let value { parameters[key] = value } }
    do {
      print(
        try await TrackerCtl.report(
          name, parameters: parameters, origin: try await origin.origin(), format: json ? .json : csv ? .csv : .table),
        terminator: "")
    } catch let error as ReportError {
      throw ValidationError("--\(error.field): \(error.reason)")
    }
  }
}

struct KeysCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keys", abstract: "Creates, lists and revokes keys (in the store: --sqlite or --postgres-url).",
    subcommands: [Create.self, List.self, Revoke.self])

  struct Create: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Creates a key and prints it once.")
    @OptionGroup var origin: OriginOptions
    @Option(help: "The app its events are stored under.") var app: String?
    @Flag(help: "An admin key (reads reports, erases) instead of a write key.") var admin = false

    func run() async throws {
      guard let store = try await origin.store() else { throw ValidationError("keys need --sqlite or --postgres-url") }
      guard admin || app != nil else { throw ValidationError("a write key needs --app") }
      print(try await TrackerCtl.createKey(app: app ?? "*", scope: admin ? .admin : .write, store: store))
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Lists the keys (ids, never the keys).")
    @OptionGroup var origin: OriginOptions

    func run() async throws {
      guard let store = try await origin.store() else { throw ValidationError("keys need --sqlite or --postgres-url") }
      print(try await TrackerCtl.listKeys(store: store).text(), terminator: "")
    }
  }

  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Revokes a key by its id.")
    @OptionGroup var origin: OriginOptions
    @Argument(help: "The key's id, as `keys list` shows it.") var id: String

    func run() async throws {
      guard let store = try await origin.store() else { throw ValidationError("keys need --sqlite or --postgres-url") }
      try await TrackerCtl.revokeKey(id: id, store: store)
      print("revoked \(id)")
    }
  }
}

struct ExportCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export", abstract: "Writes a range of events as NDJSON or CSV, with a progress bar.")
  @OptionGroup var origin: OriginOptions
  @OptionGroup var filter: FilterOptions
  @Option(help: "ndjson or csv.") var format = "ndjson"
  @Option(help: "The file to write (default: standard output).") var output: String?

  func run() async throws {
    guard format == "ndjson" || format == "csv" else { throw ValidationError("--format must be ndjson or csv") }
    let handle: FileHandle
    if let output {
      guard FileManager.default.createFile(atPath: output, contents: nil) else {
        throw ValidationError("cannot write \(output)")
      }
      handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
    } else {
      handle = FileHandle.standardOutput
    }
    let showsProgress = output != nil && isatty(2) == 1
    let written = try await TrackerCtl.export(
      parameters: filter.parameters, origin: try await origin.origin(), format: format == "csv" ? .csv : .json,
      to: { handle.write(Data($0.utf8)) },
      progress: { done, total in
        if showsProgress { FileHandle.standardError.write(Data(("\r" + TrackerCtl.progressBar(done, total)).utf8)) }
      })
    if output != nil {
      try handle.close()
      FileHandle.standardError.write(Data("\nexported \(written) events to \(output!)\n".utf8))
    }
  }
}

struct TailCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "tail", abstract: "Prints events as they arrive, until Ctrl-C (or --count events).")
  @OptionGroup var origin: OriginOptions
  @Option(help: "The app.") var app: String
  @Option(help: "Only this event.") var event: String?
  @Option(help: "Only this platform.") var platform: String?
  @Option(help: "Seconds between polls.") var every: Double = 1
  @Option(help: "Seconds back each poll looks (events arriving later than this after they occurred are not shown).")
  var lookback: Int = 600
  @Option(help: "Stop after this many events.") var count: Int?
  @Flag(help: "Print NDJSON lines.") var json = false

  func run() async throws {
    guard every > 0, every <= 3_600 else { throw ValidationError("--every must be above 0 and at most 3600 seconds") }
    guard (1...31_622_400).contains(lookback) else {
      throw ValidationError("--lookback must be 1 to 31622400 seconds (366 days)")
    }
    if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    var parameters = ["app": app]
    if let event { parameters["event"] = event }
    if let platform { parameters["platform"] = platform }
    var tail = try Tail(origin: try await origin.origin(), parameters: parameters, lookback: Int64(lookback) * 1_000)
    var printed = 0
    while count.map({ printed < $0 }) ?? true {
      do {
        for row in try await tail.poll() where count.map({ printed < $0 }) ?? true {
          // Unbuffered, so a pipe (`| grep`) sees each event at once.
          FileHandle.standardOutput.write(Data((json ? try Tail.json(row) : Tail.line(row)).utf8))
          printed += 1
        }
      } catch let error as ReportError {
        throw ValidationError("--\(error.field): \(error.reason)")
      }
      if count.map({ printed >= $0 }) ?? false { break }
      try await Task.sleep(for: .milliseconds(Int(every * 1_000)))
    }
  }
}

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
