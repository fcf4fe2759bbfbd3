import ArgumentParser
import CollectorReports
import CollectorSQLite
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import TrackerCtlKit

/// Where to read.
struct OriginOptions: ParsableArguments {
  @Option(help: "A collector's base URL, e.g. http://127.0.0.1:8080 (or TRACKERCTL_URL).") var url: String?
  @Option(help: "A read or admin key for --url (or TRACKERCTL_KEY).") var key: String?
  @Option(help: "A collector's SQLite file, read directly.") var sqlite: String?
  @Option(help: "A collector's PostgreSQL database, read directly.") var postgresUrl: String?
  @Option(help: "The PostgreSQL schema (default public).") var postgresSchema = "public"
  @Option(help: "A collector's ClickHouse server (http://host:8123), read directly.") var clickhouseUrl: String?
  @Option(help: "The ClickHouse database (default coretracker).") var clickhouseDatabase = "coretracker"

  /// The store named by --sqlite, --postgres-url or --clickhouse-url, if any, and its reports;
  /// migrated only for a command that writes (`migrating`), checked otherwise.
  func opened(migrating: Bool = false) async throws -> (store: any EventStore, reports: any ReportEngine)? {
    guard sqlite != nil || postgresUrl != nil || clickhouseUrl != nil else { return nil }
    var settings = [
      "sqlite-durability": "normal", "postgres-schema": postgresSchema, "clickhouse-database": clickhouseDatabase,
    ]
    settings["sqlite-path"] = sqlite
    settings["postgres-url"] = postgresUrl
    settings["clickhouse-url"] = clickhouseUrl
    if sqlite != nil { settings["storage"] = SQLiteStorage.name }
    do {
      return try await Stores.open(
        StorageEngines.choose(from: CollectorConfiguration.engines, settings: settings), migrating: migrating)
    } catch let error as FieldError {
      throw ValidationError(error.reason)
    }
  }

  /// The store named by --sqlite, --postgres-url or --clickhouse-url, if any, for a command that
  /// writes to it (migrated).
  func store() async throws -> (any EventStore)? { try await opened(migrating: true)?.store }

  func origin() async throws -> ReportOrigin {
    if let opened = try await opened() { return .store(opened.reports) }
    let environment = ProcessInfo.processInfo.environment
    guard let text = url ?? environment["TRACKERCTL_URL"], let base = URL(string: text), base.scheme != nil else {
      throw ValidationError("say where to read: --url (with --key), --sqlite, --postgres-url or --clickhouse-url")
    }
    guard let key = key ?? environment["TRACKERCTL_KEY"], !key.isEmpty else {
      throw ValidationError("--url needs --key (a read or admin key) or TRACKERCTL_KEY")
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
  @Option(help: "active-devices, retention, funnel: count person (default) or device.") var unit: String?

  var parameters: [String: String] {
    let pairs: [(String, String?)] = [
      ("app", app), ("from", from), ("to", to), ("platform", platform), ("appVersion", appVersion),
      ("osVersion", osVersion), ("unit", unit),
    ]
    return Dictionary(uniqueKeysWithValues: pairs.compactMap { key, value in value.map { (key, $0) } })
  }
}
