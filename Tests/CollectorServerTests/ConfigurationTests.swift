import CollectorClickHouse
import CollectorIngest
import CollectorPostgres
import CollectorReports
import CollectorRuntime
import CollectorSQLite
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import TestSupport
import Testing

@Suite("Collector configuration")
struct ConfigurationTests {
  @Test("defaults, then file, then environment, then command line")
  func layers() throws {
    let file = TestFiles.unique("collector", suffix: ".json")
    try Data(#"{"port": 9000, "rate-limit": 50, "retention-days": 90, "benchmark-routes": true}"#.utf8).write(to: file)
    let configuration = try CollectorConfiguration.resolve(
      arguments: ["config": file.path, "rate-limit": "0"],
      environment: ["COLLECTOR_PORT": "9100", "COLLECTOR_WRITE_KEYS": "ty=0123456789abcdef,dl=fedcba9876543210"]
    )
    #expect(configuration.port == 9100)
    #expect(configuration.rateLimit == nil)
    #expect(configuration.retention.defaultDays == 90)
    #expect(configuration.benchmarkRoutes)
    #expect(configuration.keys.map(\.app) == ["ty", "dl"])
    #expect(configuration.host == "127.0.0.1")
    #expect(
      configuration.storage as? SQLiteStorage
        == SQLiteStorage(path: "collector-data/collector.sqlite", durability: .full))
  }

  /// Every registered engine is chosen by its name, and by its own setting when `storage` is not
  /// set; its settings are the collector's settings; without its required setting it names what is missing.
  @Test(arguments: CollectorConfiguration.engines.map { ObjectIdentifier($0) })
  func everyRegisteredEngineIsChosenFromItsSettings(id: ObjectIdentifier) throws {
    let engine = try #require(CollectorConfiguration.engines.first { ObjectIdentifier($0) == id })
    let keys = Set(CollectorConfiguration.settings.map(\.key))
    #expect(engine.settings.allSatisfy { keys.contains($0.key) })
    var settings = Dictionary(uniqueKeysWithValues: engine.settings.map { ($0.key, "http://127.0.0.1:1") })
    settings["clickhouse-cluster"] = nil
    settings["sqlite-durability"] = "normal"
    let named = try StorageEngines.choose(
      from: CollectorConfiguration.engines, settings: settings.merging(["storage": engine.name]) { $1 })
    #expect(type(of: named) == engine)
    let chosen = try StorageEngines.choose(from: CollectorConfiguration.engines, settings: settings)
    #expect(type(of: chosen) == engine)
    if let required = engine.chosenBy {
      #expect(
        throws: FieldError(field: "storage", reason: "storage is \(engine.name) but \(required) is not set")
      ) {
        try StorageEngines.choose(from: CollectorConfiguration.engines, settings: ["storage": engine.name])
      }
    }
  }

  @Test("the ingest spool is off unless a directory is given, and bounded as told")
  func spool() throws {
    let defaults = try CollectorConfiguration.resolve(arguments: [:], environment: [:])
    #expect(defaults.spoolDirectory == nil && defaults.spoolMaximumRows == 500_000)
    let spooled = try CollectorConfiguration.resolve(
      arguments: ["spool-max-rows": "20000"], environment: ["COLLECTOR_SPOOL_DIRECTORY": "/var/spool/collector"])
    #expect(spooled.spoolDirectory == "/var/spool/collector" && spooled.spoolMaximumRows == 20_000)
  }

  @Test("the report caches are built every ten minutes unless told")
  func reportCacheInterval() throws {
    #expect(try CollectorConfiguration.resolve(arguments: [:], environment: [:]).reportCacheIntervalSeconds == 600)
    let often = try CollectorConfiguration.resolve(
      arguments: [:], environment: ["COLLECTOR_REPORT_CACHE_INTERVAL": "5"])
    #expect(often.reportCacheIntervalSeconds == 5)
  }

  @Test("a PostgreSQL URL selects PostgreSQL")
  func postgres() throws {
    let configuration = try CollectorConfiguration.resolve(
      arguments: ["postgres-schema": "analytics"], environment: ["COLLECTOR_POSTGRES_URL": "postgres://u:p@db/x"]
    )
    #expect(
      configuration.storage as? PostgresStorage == PostgresStorage(url: "postgres://u:p@db/x", schema: "analytics"))
  }

  @Test("a ClickHouse URL selects ClickHouse")
  func clickhouse() throws {
    let configuration = try CollectorConfiguration.resolve(
      arguments: ["clickhouse-database": "analytics"],
      environment: ["COLLECTOR_CLICKHOUSE_URL": "http://u:p@127.0.0.1:8123"])
    #expect(
      configuration.storage as? ClickHouseStorage
        == ClickHouseStorage(url: "http://u:p@127.0.0.1:8123", database: "analytics"))
    let defaults = try CollectorConfiguration.resolve(
      arguments: ["clickhouse-url": "http://127.0.0.1:8123"], environment: [:])
    #expect(
      defaults.storage as? ClickHouseStorage == ClickHouseStorage(url: "http://127.0.0.1:8123", database: "coretracker")
    )
    let cluster = try CollectorConfiguration.resolve(
      arguments: [
        "clickhouse-url": "http://a:8123", "clickhouse-cluster": "shards",
        "clickhouse-shard-urls": "http://a:8123,http://b:8123",
      ], environment: [:])
    #expect(
      cluster.storage as? ClickHouseStorage
        == ClickHouseStorage(
          url: "http://a:8123", database: "coretracker", cluster: "shards",
          shardURLs: ["http://a:8123", "http://b:8123"]))
  }

  @Test(
    "bad settings name their source and reason",
    arguments: [
      (["port": "http"], [:], "--port: port must be a whole number in 0...65535, not \"http\""),
      (
        [:], ["COLLECTOR_STORAGE": "mysql"],
        "COLLECTOR_STORAGE: storage must be sqlite, postgres or clickhouse, not \"mysql\""
      ),
      (["storage": "clickhouse"], [:], "--storage: storage is clickhouse but clickhouse-url is not set"),
      (
        ["clickhouse-url": "http://a:8123", "clickhouse-cluster": "shards"], [:],
        "--clickhouse-cluster: clickhouse-cluster needs clickhouse-shard-urls"
      ),
      (["storage": "postgres"], [:], "--storage: storage is postgres but postgres-url is not set"),
      (["write-keys": "ty"], [:], "--write-keys: write-keys must be name=value pairs separated by commas, not \"ty\""),
      (
        ["write-keys": "ty=short"], [:],
        "--write-keys: every key has at least 16 characters, or is given as sha256:<64 hex digits>"
      ),
      (["colour": "red"], [:], "--colour: colour is not a setting (see --help)"),
      (
        ["spool-max-rows": "10"], [:],
        "--spool-max-rows: spool-max-rows must be a whole number in 1000...100000000, not \"10\""
      ),
      (
        ["report-cache-interval": "0"], [:],
        "--report-cache-interval: report-cache-interval must be a whole number in 1...86400, not \"0\""
      ),
      (
        ["retention": "ty=forever"], [:],
        "--retention: retention of ty must be a number of days in 1...36500, not \"forever\""
      ),
    ] as [([String: String], [String: String], String)]
  )
  func problems(arguments: [String: String], environment: [String: String], message: String) {
    #expect(throws: CollectorConfiguration.Problem.self) {
      try CollectorConfiguration.resolve(arguments: arguments, environment: environment)
    }
    do {
      _ = try CollectorConfiguration.resolve(arguments: arguments, environment: environment)
    } catch {
      #expect(error.description == message)
    }
  }

  static let commandLines: [([String], [String: String]?, String?)] = [
    (
      ["--port", "9000", "--write-keys=ty=0123456789abcdef"], ["port": "9000", "write-keys": "ty=0123456789abcdef"], nil
    ),
    (["--sqlite-path", "a b.sqlite"], ["sqlite-path": "a b.sqlite"], nil),
    (["--colour", "red"], nil, "--colour: is not a setting (see --help)"),
    (["--port"], nil, "--port: needs a value"),
    (["9000"], nil, "the command line: \"9000\" is not an option (see --help)"),
  ]

  /// The command line's options are the settings list: nothing else is accepted, every setting is.
  @Test(arguments: commandLines)
  func commandLine(words: [String], expected: [String: String]?, message: String?) {
    do {
      #expect(try CollectorConfiguration.arguments(words) == expected)
    } catch {
      #expect(error.description == message)
    }
  }

  @Test func everySettingIsACommandLineOption() throws {
    for setting in CollectorConfiguration.settings {
      #expect(try CollectorConfiguration.arguments(["--\(setting.key)", "x"]) == [setting.key: "x"])
    }
  }

  @Test("every setting is documented in Docs/Collector.md")
  func readme() throws {
    let readme = try String(
      contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../Docs/Collector.md"),
      encoding: .utf8
    )
    for setting in CollectorConfiguration.settings {
      #expect(readme.contains("`\(setting.key)`") && readme.contains(setting.environment), "\(setting.key)")
    }
  }
}
