/// One line of a client's drop report, as stored: the collector keeps one row per report id,
/// service and reason, so a report a client sends again (after a crash) counts once.
public struct StoredClientDrop: Sendable, Hashable, Codable {
  /// The app (its write key's).
  public var app: String
  /// The report's id.
  public var reportID: String
  /// The service that dropped the events; empty for the tracker's own pipeline.
  public var service: String
  /// Why (`disk_budget`, `consent`, …).
  public var reason: String
  /// How many events.
  public var count: Int64
  /// The install that dropped them.
  public var deviceID: String
  /// The app's name, version and platform from the batch's context.
  public var appName: String
  public var appVersion: String
  public var platform: String
  /// When the client made the report and when the collector received it (ms since 1970).
  public var reportedAt: Int64
  public var receivedAt: Int64

  /// Creates a row.
  public init(
    app: String, reportID: String, service: String, reason: String, count: Int64, deviceID: String,
    appName: String, appVersion: String, platform: String, reportedAt: Int64, receivedAt: Int64
  ) {
    self.app = app
    self.reportID = reportID
    self.service = service
    self.reason = reason
    self.count = count
    self.deviceID = deviceID
    self.appName = appName
    self.appVersion = appVersion
    self.platform = platform
    self.reportedAt = reportedAt
    self.receivedAt = receivedAt
  }
}

/// Drops devices reported for one service and reason over a time range.
public struct ClientDropTotal: Sendable, Hashable, Codable {
  /// The service; empty for the tracker's own pipeline.
  public var service: String
  /// Why.
  public var reason: String
  /// Events dropped.
  public var count: Int64
  /// Devices that reported them.
  public var devices: Int64

  /// Creates a total.
  public init(service: String, reason: String, count: Int64, devices: Int64) {
    self.service = service
    self.reason = reason
    self.count = count
    self.devices = devices
  }
}

/// Where client drop reports are kept (every engine's `client_drops` table).
public protocol ClientDropStore: Sendable {
  /// Totals by service and reason of the reports `app` received in `[from, to)` (ms), optionally
  /// for one app name; largest first.
  func clientDrops(app: String, from: Int64, to: Int64, appName: String?) async throws -> [ClientDropTotal]
  /// How many devices reported drops in `[from, to)` (each once, whatever its reasons).
  func clientDropDevices(app: String, from: Int64, to: Int64, appName: String?) async throws -> Int64
}

/// The SQL every engine shares for the totals: the dialects differ in table names, literals and
/// how a total and a distinct count are typed.
public struct ClientDropSQL: Sendable {
  /// The event total: `sum(count)` and its cast.
  public var total: String
  /// The device count: `count(DISTINCT device_id)` and its cast.
  public var devices: String

  /// SQLite: plain SQL.
  public static let sqlite = ClientDropSQL(total: "sum(count)", devices: "count(DISTINCT device_id)")
  /// PostgreSQL: 64-bit results.
  public static let postgres = ClientDropSQL(
    total: "sum(count)::bigint", devices: "count(DISTINCT device_id)::bigint")
  /// ClickHouse: 64-bit results, an exact distinct count.
  public static let clickHouse = ClientDropSQL(
    total: "toInt64(sum(count))", devices: "toInt64(uniqExact(device_id))")

  /// Totals by service and reason over `source` (a table, or a de-duplicating subquery) where `condition`.
  public func totals(_ source: String, where condition: String) -> String {
    """
    SELECT service, reason, \(total) AS total, \(devices) AS devices
    FROM \(source) WHERE \(condition) GROUP BY service, reason ORDER BY total DESC, service, reason
    """
  }

  /// The devices that reported drops over `source` where `condition`.
  public func deviceCount(_ source: String, where condition: String) -> String {
    "SELECT \(devices) AS devices FROM \(source) WHERE \(condition)"
  }
}
