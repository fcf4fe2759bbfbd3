public import CollectorClickHouse
public import CollectorPostgres
import CollectorReports
public import CollectorSQLite
import CollectorStore
import Foundation

/// Opens the store `trackerctl` reads directly. Reading never changes it: the schema is checked, not
/// migrated (a store behind this version is refused with what to do); commands that write (`keys`)
/// pass `migrating: true`.
public enum Stores {
  private static func ready(_ store: some EventStore, migrating: Bool) async throws {
    if migrating { try await store.migrate() } else { try await store.checkSchemaForReading() }
  }

  /// The collector's SQLite file at `path`, which must exist (trackerctl never creates one).
  public static func sqlite(_ path: String, migrating: Bool = false) async throws -> SQLiteEventStore {
    guard FileManager.default.fileExists(atPath: path) else {
      throw CommandError("no SQLite file at \(path) (the collector's default is collector-data/collector.sqlite)")
    }
    let store = try SQLiteEventStore(path: path, durability: .normal)
    try await ready(store, migrating: migrating)
    return store
  }

  /// A ClickHouse server's HTTP interface (`http://host:8123`) and database.
  public static func clickhouse(_ url: String, database: String, migrating: Bool = false) async throws
    -> ClickHouseEventStore
  {
    let store = try ClickHouseEventStore(url: url, database: database)
    try await ready(store, migrating: migrating)
    return store
  }

  /// A PostgreSQL database (`postgres://user:password@host:5432/database`) and schema.
  public static func postgres(_ url: String, schema: String, migrating: Bool = false) async throws
    -> PostgresEventStore
  {
    let store = try PostgresEventStore(url: url, schema: schema)
    try await ready(store, migrating: migrating)
    return store
  }
}
