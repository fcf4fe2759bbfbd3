import CollectorClickHouse
import CollectorIngest
import CollectorPostgres
public import CollectorReports
public import CollectorRuntime
import CollectorSQLite
import CollectorStore
import CollectorWire
import Foundation
public import TrackingPlan

/// Everything a collector needs to start, resolved from four layers, later ones winning:
/// defaults → a JSON file (`--config` / `COLLECTOR_CONFIG`) → environment (`COLLECTOR_*`) →
/// command line (`--key value`).
///
/// Every setting has one key, spelled `host` in files, `COLLECTOR_HOST` in the environment and
/// `--host` on the command line (``settings`` lists them, Docs/Collector.md documents them).
public struct CollectorConfiguration: Sendable {
  /// The storage engines, by name: the one place that registers an engine.
  public static let engines: [any StorageEngine.Type] = [
    SQLiteStorage.self, PostgresStorage.self, ClickHouseStorage.self,
  ]

  /// The address to listen on.
  public var host = "127.0.0.1"
  /// The port (0 picks a free one).
  public var port = 8080
  /// The storage: one of ``engines``, as its settings configure it.
  public var storage: any StorageEngine = SQLiteStorage()
  /// Keys provisioned at start (hashed before they are stored).
  public var keys: [ProvisionedKey] = []
  /// Events per second per key (`nil`: unlimited).
  public var rateLimit: Double? = 20_000
  /// Events older than this are rejected.
  public var maximumEventAgeDays = 30
  /// Bytes of free text where the client sets no limit (a SimpleAnalytics description or counter name).
  public var maximumFreeTextBytes = 1_024
  /// Retention.
  public var retention = RetentionPolicy()
  /// The time zone each app's reports bucket days in (`time-zones`), else ``defaultZone``; a
  /// request's `tz=` overrides both.
  public var zones: [String: ReportZone] = [:]
  /// The time zone of apps not in ``zones`` (`time-zone`; default UTC).
  public var defaultZone = ReportZone.utc
  /// Serve `/bench/body` and `/bench/jsondecoder` (the benchmark's ceilings). Off in production.
  public var benchmarkRoutes = false
  /// The most rows waiting for a commit before requests are refused with 503.
  public var maximumQueuedRows = 200_000
  /// The directory of the durable ingest spool (`spool-directory`): when set, a 2xx means the rows
  /// are `fsync`ed there, and the store takes them behind it in large writes
  /// (``SpooledEventStore``); `nil` (the default): a 2xx once the store committed them.
  public var spoolDirectory: String?
  /// The most rows the spool holds for the store before requests are refused with 503.
  public var spoolMaximumRows = 500_000
  /// Seconds between builds of the report caches (`report-cache-interval`): the SQL stores' device
  /// sets and step cache, ClickHouse's closed days (``DeviceSetJob``).
  public var reportCacheIntervalSeconds = 600
  /// The longest a request may take to arrive, head to last body byte, before its connection is
  /// closed (seconds).
  public var readTimeoutSeconds = 30.0
  /// How long a connection may sit idle (no request, or a header arriving too slowly) before it is
  /// closed (seconds).
  public var idleTimeoutSeconds = 60.0
  /// The most connections open at once; past it new connections wait in the listen backlog until one
  /// closes (keep it under the process's descriptor limit, `ulimit -n`, minus the store's files).
  public var maximumConnections = 1_000
  /// Sessions, cookies, proxies and the bounds on each request's work.
  public var security = Security()
  /// The apps' tracking plans (`tracking-plans`), every version given.
  public var plans = TrackingPlans()

  /// The time the rate limits refill by, in seconds since 1970: the wall clock (a test sets its own).
  public var clock: @Sendable () -> Double = RateLimiter.wallClock

  /// The defaults.
  public init() {}

  /// One configurable setting.
  public struct Setting: Sendable, Hashable {
    /// The key (`rate-limit`).
    public var key: String
    /// What it does, with its default.
    public var help: String
    /// The environment variable (`COLLECTOR_RATE_LIMIT`).
    public var environment: String { "COLLECTOR_" + key.uppercased().replacingOccurrences(of: "-", with: "_") }
  }

  /// Every setting, in the order Docs/Collector.md lists them.
  public static let settings: [Setting] =
    [
      Setting(key: "host", help: "address to listen on (default 127.0.0.1; 0.0.0.0 for all interfaces)"),
      Setting(key: "port", help: "port to listen on (default 8080; 0 picks a free port)"),
      Setting(
        key: "storage",
        help: "\(engines.map { $0.name }.joined(separator: ", ")) (default: the one whose url is set, else "
          + "\(engines.first { $0.chosenBy == nil }?.name ?? "none"))"),
    ] + engines.flatMap { $0.settings.map { Setting(key: $0.key, help: $0.help) } } + [
      Setting(
        key: "write-keys",
        help: "write keys, app=key or app@environment=key[,...] (stored hashed; a key may be sha256:<hex>)"),
      Setting(
        key: "read-keys", help: "read keys for reports, the dashboard and exports, key[,key...] (or sha256:<hex>)"),
      Setting(key: "admin-keys", help: "admin keys for everything, erasure too, key[,key...] (or sha256:<hex>)"),
      Setting(key: "rate-limit", help: "events per second per key, 0 for none (default 20000; burst 2x, >= 2500)"),
      Setting(key: "max-event-age-days", help: "reject events older than this after skew correction (default 30)"),
      Setting(key: "retention-days", help: "delete events older than this many days (default: keep forever)"),
      Setting(key: "retention", help: "per-app retention in days, app=days or app@environment=days[,...]"),
      Setting(key: "time-zone", help: "IANA time zone reports bucket days in (default UTC; tz= overrides)"),
      Setting(key: "time-zones", help: "per-app report time zone, app=Europe/Istanbul[,app=zone...]"),
      Setting(key: "quarantine-retention-days", help: "days the quarantine keeps an entry, 0 for ever (default 30)"),
      Setting(key: "tracking-plans", help: "tracking plan files (YAML or JSON), file[,file...]; every version kept"),
      Setting(key: "max-text-bytes", help: "bytes of a SimpleAnalytics description or counter name (default 1024)"),
      Setting(key: "max-queued-rows", help: "rows waiting to commit before answering 503 (default 200000)"),
      Setting(
        key: "spool-directory",
        help: "directory of a durable ingest spool: 2xx once fsynced there, the store written behind it (default none)"),
      Setting(key: "spool-max-rows", help: "rows the spool holds for the store before answering 503 (default 500000)"),
      Setting(
        key: "report-cache-interval",
        help: "seconds between builds of the report caches (device sets, closed days; default 600)"),
      Setting(key: "benchmark-routes", help: "true to serve /bench/body and /bench/jsondecoder (default false)"),
      Setting(key: "read-timeout", help: "seconds a request may take to arrive, head to body end (default 30)"),
      Setting(key: "idle-timeout", help: "seconds an idle connection is kept open (default 60)"),
      Setting(key: "max-connections", help: "connections open at once; more wait for a free one (default 1000)"),
    ] + securitySettings

  /// The settings given on a command line as `--name value` or `--name=value`, by name; every
  /// name must be one of ``settings``.
  public static func arguments(_ words: [String]) throws(Problem) -> [String: String] {
    let known = Set(settings.map(\.key))
    var result: [String: String] = [:]
    var index = 0
    while index < words.count {
      let word = words[index]
      guard word.hasPrefix("--"), word.count > 2 else {
        throw Problem(key: word, source: "the command line", reason: "\"\(word)\" is not an option (see --help)")
      }
      let pair = word.dropFirst(2).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = String(pair[0])
      guard known.contains(name) else {
        throw Problem(key: name, source: "--\(name)", reason: "is not a setting (see --help)")
      }
      if pair.count == 2 {
        result[name] = String(pair[1])
      } else {
        guard index + 1 < words.count else {
          throw Problem(key: name, source: "--\(name)", reason: "needs a value")
        }
        index += 1
        result[name] = words[index]
      }
      index += 1
    }
    return result
  }

  /// A setting that could not be used: which one, from where, and why.
  public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The setting's key.
    public var key: String
    /// The layer it came from (`--port`, `COLLECTOR_PORT`, `config.json`).
    public var source: String
    /// What is wrong.
    public var reason: String

    public var description: String { "\(source): \(reason)" }
  }

  /// Resolves the layers. `arguments` are the command line's values by key (`["port": "9000"]`);
  /// the file comes from `arguments["config"]` or `COLLECTOR_CONFIG`.
  public static func resolve(arguments: [String: String], environment: [String: String]) throws(Problem) -> Self {
    var values: [String: (value: String, source: String)] = [:]
    if let file = arguments["config"] ?? environment["COLLECTOR_CONFIG"] {
      for (key, value) in try fileValues(file) { values[key] = (value, file) }
    }
    for setting in settings {
      if let value = environment[setting.environment] { values[setting.key] = (value, setting.environment) }
    }
    for (key, value) in arguments where key != "config" { values[key] = (value, "--\(key)") }
    var configuration = Self()
    try configuration.apply(values)
    return configuration
  }

  private static func fileValues(_ path: String) throws(Problem) -> [String: String] {
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
      throw Problem(key: "config", source: path, reason: "cannot be read (\(error.localizedDescription))")
    }
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw Problem(key: "config", source: path, reason: "is not a JSON object of settings")
    }
    var values: [String: String] = [:]
    for (key, value) in object {
      switch value {
      case let text as String: values[key] = text
      case let number as NSNumber: values[key] = number.stringValue
      default: throw Problem(key: key, source: path, reason: "\(key) must be a string, a number or a boolean")
      }
    }
    return values
  }

  private mutating func apply(_ values: [String: (value: String, source: String)]) throws(Problem) {
    let known = Set(Self.settings.map(\.key))
    for (key, entry) in values where !known.contains(key) {
      throw Problem(key: key, source: entry.source, reason: "\(key) is not a setting (see --help)")
    }
    let settings = SettingValues(values: values)
    if let host = settings.value("host")?.value { self.host = host }
    if let port = try settings.integer("port", 0...65535) { self.port = port }
    try applyStorage(settings)
    try applyKeys(settings)
    try applyLimits(settings)
    try applySecurity(settings)
    try applyPlans(settings)
  }

  private mutating func applyStorage(_ settings: SettingValues) throws(Problem) {
    let keys = ["storage"] + Self.engines.flatMap { $0.settings.map(\.key) }
    let values = Dictionary(
      uniqueKeysWithValues: keys.compactMap { key in settings.value(key).map { (key, $0.value) } })
    do {
      storage = try StorageEngines.choose(from: Self.engines, settings: values)
    } catch {
      throw settings.fail(error.field, error.reason)
    }
  }

  private mutating func applyKeys(_ settings: SettingValues) throws(Problem) {
    keys = try settings.pairs("write-keys").map { ProvisionedKey(app: $0.0, key: $0.1, scope: .write) }
    for key in keys {
      do {
        try AppEnvironment.checkTarget(key.app, field: "write-keys")
      } catch {
        throw settings.fail("write-keys", error.reason)
      }
    }
    for key in keys { try Self.check(key.key, "write-keys", settings) }
    for (name, scope) in [("read-keys", KeyRecord.Scope.read), ("admin-keys", .admin)] {
      guard let list = settings.value(name) else { continue }
      for key in list.value.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
        try Self.check(key, name, settings)
        keys.append(ProvisionedKey(app: "*", key: key, scope: scope))
      }
    }
  }

  /// A configured key is at least 16 characters, or its hash in the `sha256:<hex>` form; the
  /// refusal never repeats the key.
  private static func check(_ key: String, _ setting: String, _ settings: SettingValues) throws(Problem) {
    if key.hasPrefix(AccessKeys.hashedPrefix) {
      guard AccessKeys.isHashForm(key) else {
        throw settings.fail(setting, "a key given by its hash is sha256: and 64 hex digits (trackerctl keys hash)")
      }
    } else if key.count < 16 {
      throw settings.fail(setting, "every key has at least 16 characters, or is given as sha256:<64 hex digits>")
    }
  }

  private mutating func applyZones(_ settings: SettingValues) throws(Problem) {
    if let name = settings.value("time-zone") {
      do {
        defaultZone = try ReportZone(identifier: name.value, field: "time-zone")
      } catch {
        throw settings.fail("time-zone", "time-zone: \(error.reason)")
      }
    }
    for (app, name) in try settings.pairs("time-zones") {
      do {
        zones[app] = try ReportZone(identifier: name, field: "time-zones")
      } catch {
        throw settings.fail("time-zones", "time zone of \(app): \(error.reason)")
      }
    }
  }

  /// The time zone of `app`'s reports when a request names none.
  public func zone(of app: String) -> ReportZone { zones[app] ?? defaultZone }

  private mutating func applyLimits(_ settings: SettingValues) throws(Problem) {
    if let rate = settings.value("rate-limit") {
      guard let number = Double(rate.value), number >= 0, number.isFinite else {
        throw settings.fail(
          "rate-limit", "rate-limit must be a number of events per second (0 for none), not \"\(rate.value)\"")
      }
      rateLimit = number == 0 ? nil : number
    }
    if let age = try settings.integer("max-event-age-days", 1...3650) { maximumEventAgeDays = age }
    if let days = try settings.integer("retention-days", 1...36500) { retention.defaultDays = days }
    for (app, days) in try settings.pairs("retention") {
      guard let number = Int(days), (1...36500).contains(number) else {
        throw settings.fail("retention", "retention of \(app) must be a number of days in 1...36500, not \"\(days)\"")
      }
      do {
        try AppEnvironment.checkTarget(app, field: "retention")
      } catch {
        throw settings.fail("retention", error.reason)
      }
      // `ty@development` is the development environment's data: its own retention.
      retention.perApp[AppEnvironment.resolve(target: app, sent: "").storedApp] = number
    }
    try applyZones(settings)
    if let rows = try settings.integer("max-queued-rows", 1000...100_000_000) { maximumQueuedRows = rows }
    if let directory = settings.value("spool-directory")?.value, !directory.isEmpty { spoolDirectory = directory }
    if let rows = try settings.integer("spool-max-rows", 1000...100_000_000) { spoolMaximumRows = rows }
    if let seconds = try settings.integer("report-cache-interval", 1...86_400) { reportCacheIntervalSeconds = seconds }
    if let days = try settings.integer("quarantine-retention-days", 0...36500) {
      retention.quarantineDays = days == 0 ? nil : days
    }
    if let bytes = try settings.integer("max-text-bytes", 1...32_768) { maximumFreeTextBytes = bytes }
    if let seconds = try settings.seconds("read-timeout") { readTimeoutSeconds = seconds }
    if let seconds = try settings.seconds("idle-timeout") { idleTimeoutSeconds = seconds }
    if let connections = try settings.integer("max-connections", 1...1_000_000) { maximumConnections = connections }
    if let flag = settings.value("benchmark-routes") {
      // JSON files give booleans as 1/0 through JSONSerialization.
      guard let parsed = Bool(flag.value) ?? ["1": true, "0": false][flag.value] else {
        throw settings.fail("benchmark-routes", "benchmark-routes must be true or false, not \"\(flag.value)\"")
      }
      benchmarkRoutes = parsed
    }
  }
}

/// The settings' raw values with where each came from, read as the types settings take; every
/// refusal names the setting, its source and what it must be.
struct SettingValues {
  typealias Problem = CollectorConfiguration.Problem
  let values: [String: (value: String, source: String)]

  func value(_ key: String) -> (value: String, source: String)? { values[key] }

  func fail(_ key: String, _ reason: String) -> Problem {
    Problem(key: key, source: values[key]?.source ?? key, reason: reason)
  }

  func integer(_ key: String, _ range: ClosedRange<Int>) throws(Problem) -> Int? {
    guard let entry = value(key) else { return nil }
    guard let number = Int(entry.value), range.contains(number) else {
      throw fail(
        key, "\(key) must be a whole number in \(range.lowerBound)...\(range.upperBound), not \"\(entry.value)\"")
    }
    return number
  }

  func seconds(_ key: String) throws(Problem) -> Double? {
    guard let entry = value(key) else { return nil }
    guard let number = Double(entry.value), number.isFinite, (0.1...86_400).contains(number) else {
      throw fail(key, "\(key) must be a number of seconds in 0.1...86400, not \"\(entry.value)\"")
    }
    return number
  }

  func pairs(_ key: String) throws(Problem) -> [(String, String)] {
    guard let entry = value(key) else { return [] }
    var result: [(String, String)] = []
    for part in entry.value.split(separator: ",") {
      let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
      guard pieces.count == 2, !pieces[0].isEmpty, !pieces[1].isEmpty else {
        throw fail(key, "\(key) must be name=value pairs separated by commas, not \"\(part)\"")
      }
      result.append((pieces[0], pieces[1]))
    }
    return result
  }
}
