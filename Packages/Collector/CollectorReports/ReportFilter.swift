import CollectorStore
import Foundation

/// What every report is about: one app, a time range, and optional filters.
///
/// Times are milliseconds since 1970 in UTC; the range is half-open (`from` included, `to` not).
public struct ReportFilter: Sendable, Hashable {
  /// The app (the write key's app).
  public var app: String
  /// The first millisecond in the range.
  public var from: Int64
  /// The first millisecond after the range.
  public var to: Int64
  /// Only events of this platform (`iOS`, `Android`, ...).
  public var platform: String?
  /// Only events of this app version.
  public var appVersion: String?
  /// Only events of this OS version.
  public var osVersion: String?

  /// A filter; throws ``ReportError`` when the range is empty or the app is missing.
  public init(
    app: String, from: Int64, to: Int64, platform: String? = nil, appVersion: String? = nil, osVersion: String? = nil
  ) throws(ReportError) {
    guard !app.isEmpty else { throw ReportError(field: "app", reason: "is required") }
    guard from < to else { throw ReportError(field: "to", reason: "must be after from") }
    guard to - from <= 3_660 * 86_400_000 else { throw ReportError(field: "to", reason: "the range is over 10 years") }
    self.app = app
    self.from = from
    self.to = to
    self.platform = platform.flatMap { $0.isEmpty ? nil : $0 }
    self.appVersion = appVersion.flatMap { $0.isEmpty ? nil : $0 }
    self.osVersion = osVersion.flatMap { $0.isEmpty ? nil : $0 }
  }

  /// The range of the same length just before this one (for "against the previous range").
  public var previous: ReportFilter {
    var copy = self
    copy.to = from
    copy.from = from - (to - from)
    return copy
  }
}

/// A report request that cannot be answered: the parameter and why.
public struct ReportError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The query parameter at fault.
  public var field: String
  /// What is wrong.
  public var reason: String

  /// An error.
  public init(field: String, reason: String) {
    self.field = field
    self.reason = reason
  }

  public var description: String { "\(field): \(reason)" }
}

/// Builds one parameterised query in a store's dialect: placeholders, time columns, JSON access.
struct SQLBuilder {
  let dialect: SQLDialect
  private(set) var arguments: [SQLValue] = []

  init(_ dialect: SQLDialect) { self.dialect = dialect }

  /// Binds `value` and returns its placeholder.
  mutating func bind(_ value: SQLValue) -> String {
    arguments.append(value)
    // Numbered in both dialects (`?3` in SQLite, `$3` in PostgreSQL): the order in which parts of a
    // query are built does not have to be the order in which they appear.
    return dialect == .sqlite ? "?\(arguments.count)" : "$\(arguments.count)"
  }

  mutating func bind(_ value: Int64) -> String { bind(.int(value)) }
  mutating func bind(_ value: String) -> String { bind(.text(value)) }

  /// A time column as milliseconds since 1970.
  func ms(_ column: String) -> String {
    dialect == .sqlite ? column : "(extract(epoch from \(column)) * 1000)::bigint"
  }

  /// A placeholder holding milliseconds, as a value comparable with a time column.
  func time(_ placeholder: String) -> String {
    dialect == .sqlite ? placeholder : "to_timestamp(\(placeholder)::double precision / 1000)"
  }

  /// One parameter of the `parameters` JSON as text (`true`/`false` for booleans, numbers as written).
  mutating func parameter(_ key: String) -> String {
    switch dialect {
    case .sqlite:
      let path = bind("$.\"" + key.replacingOccurrences(of: "\"", with: "\\\"") + "\"")
      return
        "(CASE json_type(parameters, \(path)) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
        + "ELSE CAST(json_extract(parameters, \(path)) AS TEXT) END)"
    case .postgres:
      return "(parameters ->> \(bind(key)))"
    }
  }

  /// The `WHERE` conditions of `filter` on the events table (`occurred_at` in range).
  mutating func conditions(_ filter: ReportFilter, timeColumn: String = "occurred_at") -> String {
    var parts = [
      "app = \(bind(filter.app))", "\(timeColumn) >= \(time(bind(filter.from)))",
      "\(timeColumn) < \(time(bind(filter.to)))",
    ]
    parts += dimensionConditions(filter)
    return parts.joined(separator: " AND ")
  }

  /// The `WHERE` conditions of `filter` on a rollup (`hour` in range; the range is on whole hours).
  mutating func rollupConditions(_ filter: ReportFilter) -> String {
    var parts = ["app = \(bind(filter.app))", "hour >= \(bind(filter.from))", "hour < \(bind(filter.to))"]
    parts += dimensionConditions(filter)
    return parts.joined(separator: " AND ")
  }

  /// The platform and version conditions of `filter`, if any.
  mutating func dimensionConditions(_ filter: ReportFilter, prefix: String = "") -> [String] {
    var parts: [String] = []
    if let platform = filter.platform { parts.append("\(prefix)platform = \(bind(platform))") }
    if let version = filter.appVersion { parts.append("\(prefix)app_version = \(bind(version))") }
    if let version = filter.osVersion { parts.append("\(prefix)os_version = \(bind(version))") }
    return parts
  }

  /// A text expression identifying one session of one device (NULL without a session).
  var sessionKey: String { "device_id || ':' || CAST(session_id AS TEXT)" }

  /// The same expression on the sessions rollup.
  var rollupSessionKey: String { "CASE WHEN session_key <> '' THEN device_id || ':' || session_key END" }
}
