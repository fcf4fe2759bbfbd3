public import CollectorStore
public import CollectorWire
import Foundation
public import Logging

/// One of the collector's storage engines, as the collector and trackerctl open it: by name, from
/// its settings.
///
/// Each engine implements it in its own folder (`SQLiteStorage`, `PostgresStorage`,
/// `ClickHouseStorage`); the collector's configuration registers them in one list. Nothing else
/// names an engine: adding one is its folder plus a line in that list.
public protocol StorageEngine: Sendable {
  /// The name the `storage` setting takes (`sqlite`).
  static var name: String { get }
  /// The engine's settings, with their help, in the order the docs list them.
  static var settings: [(key: String, help: String)] { get }
  /// The setting whose presence chooses this engine when `storage` is not set (`postgres-url`);
  /// `nil` for the engine chosen when no other is.
  static var chosenBy: String? { get }
  /// The engine as `settings` configure it (by key; a missing one takes its default); a setting that
  /// cannot be used is a ``FieldError`` naming it.
  init(settings: [String: String]) throws(FieldError)
  /// The storage in words, for the log: no secret.
  var description: String { get }
  /// Opens the store (not migrated) and its reports; without `creating`, a store that does not exist
  /// yet is an error (``StoreError/unavailable(_:)``) where the engine can tell.
  func open(logger: Logger, creating: Bool) throws -> (store: any EventStore, reports: any ReportEngine)
}

extension StorageEngine {
  /// `url` without its password.
  public static func redacted(_ url: String) -> String {
    guard var components = URLComponents(string: url) else { return "(invalid URL)" }
    if components.password != nil { components.password = "***" }
    return components.string ?? "(invalid URL)"
  }
}

/// Choosing one of the registered engines.
public enum StorageEngines {
  /// The engine `settings` name: the `storage` setting's, else the first whose ``StorageEngine/chosenBy``
  /// setting is set, else the one chosen by none.
  public static func choose(
    from engines: [any StorageEngine.Type], settings: [String: String]
  ) throws(FieldError) -> any StorageEngine {
    let names = engines.map { $0.name }
    let chosen: (any StorageEngine.Type)?
    if let name = settings["storage"] {
      chosen = engines.first { $0.name == name }
      guard chosen != nil else {
        throw FieldError(
          field: "storage", reason: "storage must be \(list(names)), not \"\(name)\"")
      }
    } else {
      chosen =
        engines.first { engine in engine.chosenBy.map { settings[$0] != nil } ?? false }
        ?? engines.first { $0.chosenBy == nil }
    }
    guard let chosen else { throw FieldError(field: "storage", reason: "storage is not set") }
    return try chosen.init(settings: settings)
  }

  private static func list(_ names: [String]) -> String {
    names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
  }
}
