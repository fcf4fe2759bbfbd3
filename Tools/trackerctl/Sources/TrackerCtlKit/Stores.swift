public import CollectorReports
public import CollectorStore
import Logging

/// Opens the store `trackerctl` reads directly. Reading never changes it: the store must exist, and
/// its schema is checked, not migrated (a store behind this version is refused with what to do);
/// commands that write (`keys`) pass `migrating: true`.
public enum Stores {
  /// The store and reports of `engine`, ready for reading (or migrated, with `migrating`).
  public static func open(_ engine: any StorageEngine, migrating: Bool = false) async throws -> (
    store: any EventStore, reports: any ReportEngine
  ) {
    let opened = try engine.open(logger: Logger(label: "trackerctl"), creating: migrating)
    if migrating { try await opened.store.migrate() } else { try await opened.store.checkSchemaForReading() }
    return opened
  }
}
