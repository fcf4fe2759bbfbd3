public import CollectorReports
public import CollectorStore
public import CollectorWire
public import Logging

/// The ClickHouse engine: a database shared by any number of collectors, on one server or sharded
/// over a cluster.
public struct ClickHouseStorage: StorageEngine, Hashable {
  /// The HTTP interface, `http://[user:password@]host:8123`.
  public var url: String
  /// The database.
  public var database: String
  /// The cluster (the servers' `remote_servers` name) to shard over, if any.
  public var cluster: String?
  /// Every shard's HTTP URL (with ``cluster``).
  public var shardURLs: [String]

  /// The engine on `url`.
  public init(url: String, database: String = "coretracker", cluster: String? = nil, shardURLs: [String] = []) {
    self.url = url
    self.database = database
    self.cluster = cluster
    self.shardURLs = shardURLs
  }

  public static let name = "clickhouse"
  public static let chosenBy: String? = "clickhouse-url"
  public static let settings: [(key: String, help: String)] = [
    (key: "clickhouse-url", help: "ClickHouse's HTTP interface, http://[user:password@]host:8123"),
    (key: "clickhouse-database", help: "the ClickHouse database (default coretracker)"),
    (key: "clickhouse-cluster", help: "the ClickHouse cluster to shard over (its remote_servers name)"),
    (key: "clickhouse-shard-urls", help: "every shard's HTTP URL, url[,url...] (with clickhouse-cluster)"),
  ]

  public init(settings: [String: String]) throws(FieldError) {
    guard let url = settings["clickhouse-url"] else {
      throw FieldError(field: "storage", reason: "storage is clickhouse but clickhouse-url is not set")
    }
    let cluster = settings["clickhouse-cluster"]
    let shards = settings["clickhouse-shard-urls"]?.split(separator: ",").map(String.init) ?? []
    if cluster != nil && shards.isEmpty {
      throw FieldError(field: "clickhouse-cluster", reason: "clickhouse-cluster needs clickhouse-shard-urls")
    }
    self.init(
      url: url, database: settings["clickhouse-database"] ?? "coretracker", cluster: cluster, shardURLs: shards)
  }

  public var description: String {
    let sharding = cluster.map { " on cluster \($0) (\(shardURLs.count) shards)" } ?? ""
    return "ClickHouse \(Self.redacted(url)) database \(database)\(sharding)"
  }

  public func open(logger: Logger, creating: Bool) throws -> (store: any EventStore, reports: any ReportEngine) {
    let store = try ClickHouseEventStore(url: url, database: database, cluster: cluster, shardURLs: shardURLs)
    return (store, ClickHouseReports(store: store))
  }
}
