public import CollectorReports
public import CollectorStore
public import CollectorWire
public import Logging

/// The PostgreSQL engine: one database shared by several collectors.
public struct PostgresStorage: StorageEngine, Hashable {
  /// `postgres://user:password@host:5432/database`.
  public var url: String
  /// The schema.
  public var schema: String

  /// The engine on `url`, in `schema`.
  public init(url: String, schema: String = "public") {
    self.url = url
    self.schema = schema
  }

  public static let name = "postgres"
  public static let chosenBy: String? = "postgres-url"
  public static let settings: [(key: String, help: String)] = [
    (key: "postgres-url", help: "postgres://user:password@host:5432/database[?sslmode=disable|prefer|require]"),
    (key: "postgres-schema", help: "the PostgreSQL schema (default public)"),
  ]

  public init(settings: [String: String]) throws(FieldError) {
    guard let url = settings["postgres-url"] else {
      throw FieldError(field: "storage", reason: "storage is postgres but postgres-url is not set")
    }
    self.init(url: url, schema: settings["postgres-schema"] ?? "public")
  }

  public var description: String { "PostgreSQL \(Self.redacted(url)) schema \(schema)" }

  public func open(logger: Logger, creating: Bool) throws -> (store: any EventStore, reports: any ReportEngine) {
    let store = try PostgresEventStore(url: url, schema: schema, logger: logger)
    return (store, SQLReports(store: store))
  }
}
