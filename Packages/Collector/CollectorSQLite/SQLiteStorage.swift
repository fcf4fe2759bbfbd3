public import CollectorReports
public import CollectorStore
public import CollectorWire
import Foundation
public import Logging

/// The SQLite engine: one file (the collector's default).
public struct SQLiteStorage: StorageEngine, Hashable {
  /// The file's path.
  public var path: String
  /// How hard a commit waits for the disk.
  public var durability: SQLiteEventStore.Durability

  /// The engine on `path`.
  public init(path: String = "collector-data/collector.sqlite", durability: SQLiteEventStore.Durability = .full) {
    self.path = path
    self.durability = durability
  }

  public static let name = "sqlite"
  public static let chosenBy: String? = nil
  public static let settings: [(key: String, help: String)] = [
    (key: "sqlite-path", help: "the SQLite file (default collector-data/collector.sqlite)"),
    (key: "sqlite-durability", help: "full (fsync every commit, default) or normal (fsync at checkpoints)"),
  ]

  public init(settings: [String: String]) throws(FieldError) {
    let text = settings["sqlite-durability"] ?? "full"
    guard let durability = SQLiteEventStore.Durability(rawValue: text) else {
      throw FieldError(
        field: "sqlite-durability", reason: "sqlite-durability must be full or normal, not \"\(text)\"")
    }
    self.init(path: settings["sqlite-path"] ?? "collector-data/collector.sqlite", durability: durability)
  }

  public var description: String { "SQLite \(path) (WAL, synchronous=\(durability.rawValue))" }

  public func open(logger: Logger, creating: Bool) throws -> (store: any EventStore, reports: any ReportEngine) {
    guard creating || FileManager.default.fileExists(atPath: path) else {
      throw StoreError.unavailable(
        "no SQLite file at \(path) (the collector's default is collector-data/collector.sqlite)")
    }
    let store = try SQLiteEventStore(path: path, durability: durability)
    return (store, SQLReports(store: store))
  }
}
