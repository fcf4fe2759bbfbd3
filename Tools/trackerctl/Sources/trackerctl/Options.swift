import ArgumentParser
import CollectorReports
import CollectorSQLite
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import TrackerCtlKit

/// A collector's store, opened directly: `--sqlite`, `--postgres-url` or `--clickhouse-url`.
struct StoreOptions: ParsableArguments {
  @Option(help: "A collector's SQLite file, read directly.") var sqlite: String?
  @Option(help: "A collector's PostgreSQL database, read directly.") var postgresUrl: String?
  @Option(help: "The PostgreSQL schema (default public).") var postgresSchema = "public"
  @Option(help: "A collector's ClickHouse server (http://host:8123), read directly.") var clickhouseUrl: String?
  @Option(help: "The ClickHouse database (default coretracker).") var clickhouseDatabase = "coretracker"

  /// The store named, if any, and its reports; migrated only for a command that writes
  /// (`migrating`), checked otherwise. Two stores named, or a ClickHouse URL that is not http(s), are
  /// usage errors.
  func opened(migrating: Bool = false) async throws -> (store: any EventStore, reports: any ReportEngine)? {
    guard try choice(url: nil) == .store else { return nil }
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

  /// The store named, if any, for a command that writes to it (migrated).
  func store() async throws -> (any EventStore)? { try await opened(migrating: true)?.store }

  /// The one place named among these and `url`.
  func choice(url: String?) throws -> OriginChoice {
    do {
      return try OriginChoice.choose(url: url, sqlite: sqlite, postgresURL: postgresUrl, clickhouseURL: clickhouseUrl)
    } catch {
      throw ValidationError(error.description)
    }
  }
}

/// Where to read: a running collector (`--url` with `--key`) or a store opened directly.
struct OriginOptions: ParsableArguments {
  @Option(help: "A collector's base URL, e.g. http://127.0.0.1:8080 (or TRACKERCTL_URL).") var url: String?
  @Option(help: "A read or admin key for --url (or TRACKERCTL_KEY).") var key: String?
  @OptionGroup var stores: StoreOptions

  func origin() async throws -> ReportOrigin {
    let environment = ProcessInfo.processInfo.environment
    var choice = try stores.choice(url: url)
    if choice == .none, let text = environment["TRACKERCTL_URL"] {
      do {
        choice = .collector(base: try OriginChoice.httpURL(text, option: "TRACKERCTL_URL"))
      } catch {
        throw ValidationError(error.description)
      }
    }
    switch choice {
    case .store:
      guard let opened = try await stores.opened() else { throw ValidationError("the store could not be opened") }
      return .store(opened.reports)
    case .collector(let base):
      guard let key = key ?? environment["TRACKERCTL_KEY"], !key.isEmpty else {
        throw ValidationError("--url needs --key (a read or admin key) or TRACKERCTL_KEY")
      }
      return .http(base, key: key)
    case .none:
      throw ValidationError("say where to read: --url (with --key), --sqlite, --postgres-url or --clickhouse-url")
    }
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
  @Option(help: "IANA time zone of days and hours, e.g. Europe/Istanbul (default: the app's, else UTC).")
  var tz: String?
  @Option(help: "The environment: production (default), development, internal or the app's own name.")
  var environment: String?

  var parameters: [String: String] {
    let pairs: [(String, String?)] = [
      ("app", app), ("from", from), ("to", to), ("platform", platform), ("appVersion", appVersion),
      ("osVersion", osVersion), ("unit", unit), ("tz", tz), ("environment", environment),
    ]
    return Dictionary(uniqueKeysWithValues: pairs.compactMap { key, value in value.map { (key, $0) } })
  }
}
