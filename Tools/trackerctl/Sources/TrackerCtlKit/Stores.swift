public import CollectorClickHouse
public import CollectorPostgres
import CollectorReports
public import CollectorSQLite
import CollectorStore
import Foundation

/// Opens the store `trackerctl` reads directly.
public enum Stores {
  /// The collector's SQLite file at `path`, which must exist (trackerctl never creates one).
  public static func sqlite(_ path: String) async throws -> SQLiteEventStore {
    guard FileManager.default.fileExists(atPath: path) else {
      throw CommandError("no SQLite file at \(path) (the collector's default is collector-data/collector.sqlite)")
    }
    let store = try SQLiteEventStore(path: path, durability: .normal)
    try await store.migrate()
    return store
  }

  /// A ClickHouse server's HTTP interface (`http://host:8123`) and database.
  public static func clickhouse(_ url: String, database: String) async throws -> ClickHouseEventStore {
    let store = try ClickHouseEventStore(url: url, database: database)
    try await store.migrate()
    return store
  }

  /// A PostgreSQL database (`postgres://user:password@host:5432/database`) and schema.
  public static func postgres(_ url: String, schema: String) async throws -> PostgresEventStore {
    let store = try PostgresEventStore(url: url, schema: schema)
    try await store.migrate()
    return store
  }
}
