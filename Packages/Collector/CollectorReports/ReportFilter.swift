import CollectorStore
public import CollectorWire
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
  /// Only events carrying this app name (SimpleAnalytics' `app_name`, the native context's
  /// `appName`): read from the events, so it turns the rollups off; revenue and top items refuse it
  /// (their facts do not keep the name).
  public var appName: String?
  /// What active users, retention and funnels count: people (the default) or devices. Counting
  /// people needs identities: without any in the app, every device is a person of its own and both
  /// units give the same answers.
  public var unit: ReportUnit
  /// The time zone days, weeks and hours are bucketed in (UTC unless told).
  public var zone: ReportZone
  /// The environment reported on: `production` unless told (``AppEnvironment``).
  public var environment: String

  /// The app the store keeps this filter's environment under (`shop`, `shop@development`): what
  /// every query matches, so that two environments never meet in one answer.
  public var storedApp: String { AppEnvironment.storedApp(app, environment: environment) }

  /// A filter; throws ``FieldError`` when the range is empty, longer than 10 years or outside
  /// ``bounds``, the app is missing or names an environment, the environment is not a valid name, or
  /// a text holds a control character.
  public init(
    app: String, from: Int64, to: Int64, platform: String? = nil, appVersion: String? = nil, osVersion: String? = nil,
    appName: String? = nil, unit: ReportUnit = .person, zone: ReportZone = .utc,
    environment: String = AppEnvironment.production
  ) throws(FieldError) {
    guard !app.isEmpty else { throw FieldError(field: "app", reason: "is required") }
    try ReportText.check(app, field: "app")
    guard !app.contains(AppEnvironment.separator) else {
      throw FieldError(field: "app", reason: "names the app alone; the environment is its own parameter")
    }
    guard AppEnvironment.isName(environment) else {
      throw FieldError(field: "environment", reason: AppEnvironment.nameRule)
    }
    for (field, value) in [
      ("platform", platform), ("appVersion", appVersion), ("osVersion", osVersion), ("appName", appName),
    ] {
      if let value { try ReportText.check(value, field: field) }
    }
    guard Self.bounds.contains(from) else { throw FieldError(field: "from", reason: "is out of range") }
    guard Self.bounds.contains(to) else { throw FieldError(field: "to", reason: "is out of range") }
    guard from < to else { throw FieldError(field: "to", reason: "must be after from") }
    guard to - from <= 3_660 * 86_400_000 else { throw FieldError(field: "to", reason: "the range is over 10 years") }
    self.app = app
    self.from = from
    self.to = to
    self.platform = platform.flatMap { $0.isEmpty ? nil : $0 }
    self.appVersion = appVersion.flatMap { $0.isEmpty ? nil : $0 }
    self.osVersion = osVersion.flatMap { $0.isEmpty ? nil : $0 }
    self.appName = appName.flatMap { $0.isEmpty ? nil : $0 }
    self.unit = unit
    self.zone = zone
    self.environment = environment
  }

  /// The times a filter may start or end at (ms; years 1653 to 33658): every difference, the range
  /// before and every bucket stay far inside `Int64`, and every engine can hold them as timestamps.
  public static let bounds: ClosedRange<Int64> = -10_000_000_000_000...1_000_000_000_000_000

  /// Whether the hourly activity rollups can answer this filter (every engine keeps them): the range
  /// is on whole hours (UTC), the zone's offsets inside it are whole hours, and no app name is asked
  /// for (the rollups do not keep it).
  package var rollupsAnswer: Bool {
    from % RollupTables.hour == 0 && to % RollupTables.hour == 0 && appName == nil
      && zone.keepsWholeHours(from: from, to: to)
  }

  /// The range of the same length just before this one (for "against the previous range").
  public var previous: ReportFilter {
    var copy = self
    copy.to = from
    copy.from = from - (to - from)
    return copy
  }
}

/// What a report counts as one user: a person (a device's identified user with all of that user's
/// devices, ``PersonSQL``) or a device.
public enum ReportUnit: String, Sendable, Hashable, Codable, CaseIterable {
  /// People: a device belongs to the first user it was identified as; a device never identified is
  /// a person of its own.
  case person
  /// Devices, identified or not.
  case device

  /// The unit parsed from a report parameter (`person` when absent); throws ``FieldError`` for
  /// `unit` otherwise.
  public init(parameter text: String?) throws(FieldError) {
    guard let text, !text.isEmpty else {
      self = .person
      return
    }
    guard let unit = ReportUnit(rawValue: text) else { throw FieldError(field: "unit", reason: "is person or device") }
    self = unit
  }

  /// The unit's plural, as tables and the dashboard label counts (`people`, `devices`).
  public var plural: String { self == .person ? "people" : "devices" }

  /// The plural as a heading (`People`, `Devices`).
  public var title: String { self == .person ? "People" : "Devices" }
}

/// Builds one parameterised query in a store's dialect: placeholders, time columns, JSON access.
struct SQLBuilder {
  let dialect: any SQLDialect
  private(set) var arguments: [SQLValue] = []

  init(_ dialect: any SQLDialect) { self.dialect = dialect }

  /// Binds `value` and returns its placeholder.
  mutating func bind(_ value: SQLValue) -> String {
    arguments.append(value)
    return dialect.placeholder(arguments.count)
  }

  mutating func bind(_ value: Int64) -> String { bind(.int(value)) }
  mutating func bind(_ value: String) -> String { bind(.text(value)) }

  /// The sum of a column of client-sent counts, saturating (``SQLDialect/saturatingSum(_:)``).
  func saturatingSum(_ column: String) -> String { dialect.saturatingSum(column) }

  /// A time column as milliseconds since 1970.
  func ms(_ column: String) -> String { dialect.milliseconds(column) }

  /// A placeholder holding milliseconds, as a value comparable with a time column.
  func time(_ placeholder: String) -> String { dialect.time(placeholder) }

  /// One parameter of the `parameters` JSON as text (`true`/`false` for booleans, numbers as written).
  mutating func parameter(_ key: String) -> String {
    var arguments = self.arguments
    let text = dialect.parameterText(key) { value in
      arguments.append(.text(value))
      return dialect.placeholder(arguments.count)
    }
    self.arguments = arguments
    return text
  }

  /// The `WHERE` conditions of `filter` on the events table (`occurred_at` in range).
  mutating func conditions(_ filter: ReportFilter, timeColumn: String = "occurred_at", prefix: String = "") -> String {
    var parts = [
      "\(prefix)app = \(bind(filter.storedApp))", "\(prefix)\(timeColumn) >= \(time(bind(filter.from)))",
      "\(prefix)\(timeColumn) < \(time(bind(filter.to)))",
    ]
    parts += dimensionConditions(filter, prefix: prefix)
    return parts.joined(separator: " AND ")
  }

  /// The `WHERE` conditions of `filter` on a table whose `column` holds ms since 1970. `unindexed`:
  /// the bounds are written `+column`, which no index serves (a read by key).
  mutating func msConditions(
    _ filter: ReportFilter, column: String, prefix: String = "", unindexed: Bool = false
  ) -> String {
    let time = (unindexed ? "+" : "") + prefix + column
    var parts = [
      "\(prefix)app = \(bind(filter.storedApp))", "\(time) >= \(bind(filter.from))", "\(time) < \(bind(filter.to))",
    ]
    parts += dimensionConditions(filter, prefix: prefix)
    return parts.joined(separator: " AND ")
  }

  /// The `WHERE` conditions of `filter` on a rollup (`hour` in range; the range is on whole hours).
  /// `byKey`: the hour bounds are written `+hour`, which no index serves, and the term of the
  /// partial indexes by key is named, so the planner reads the rollup through the index by its key
  /// (``SQLDialect/indexesRollupsByKey``); without it, no query can read those indexes.
  mutating func rollupConditions(_ filter: ReportFilter, byKey: Bool = false) -> String {
    let hour = byKey ? "+hour" : "hour"
    var parts = ["app = \(bind(filter.storedApp))", "\(hour) >= \(bind(filter.from))", "\(hour) < \(bind(filter.to))"]
    if byKey { parts.append("device_id IS NOT NULL") }
    parts += dimensionConditions(filter)
    return parts.joined(separator: " AND ")
  }

  /// The platform and version conditions of `filter`, if any.
  mutating func dimensionConditions(_ filter: ReportFilter, prefix: String = "") -> [String] {
    var parts: [String] = []
    if let platform = filter.platform { parts.append("\(prefix)platform = \(bind(platform))") }
    if let version = filter.appVersion { parts.append("\(prefix)app_version = \(bind(version))") }
    if let version = filter.osVersion { parts.append("\(prefix)os_version = \(bind(version))") }
    if let name = filter.appName { parts.append("\(prefix)app_name = \(bind(name))") }
    return parts
  }

  /// A text expression identifying one session of one device (NULL without a session).
  var sessionKey: String { "device_id || ':' || CAST(session_id AS TEXT)" }

  /// The same expression on the sessions rollup.
  var rollupSessionKey: String { "CASE WHEN session_key <> '' THEN device_id || ':' || session_key END" }
}

/// Text a report request names (apps, events, parameters, versions, cursors): checked before it
/// reaches a query, so a NUL or another control character is a 400 naming the parameter, never a
/// storage error.
public enum ReportText {
  /// The longest text a report takes, in UTF-8 bytes.
  public static let maximumBytes = 1_024

  /// Throws ``FieldError`` for `field` when `text` is longer than ``maximumBytes`` or holds a C0
  /// control character or DEL.
  public static func check(_ text: String, field: String) throws(FieldError) {
    guard text.utf8.count <= maximumBytes else {
      throw FieldError(field: field, reason: "is longer than \(maximumBytes) bytes")
    }
    guard !CollectorLimits.hasControlCharacter(text) else {
      throw FieldError(field: field, reason: "must not contain control characters")
    }
  }
}

extension ReportFilter {
  /// Throws ``FieldError`` naming `appName` for a report whose facts do not keep the app name.
  package func refusingAppName(_ report: String) throws(FieldError) {
    guard appName == nil else {
      throw FieldError(field: "appName", reason: "does not filter \(report): its facts do not keep the app name")
    }
  }
}

extension ReportText {
  /// Throws ``FieldError`` for `field` when the event name `text` is longer than ``maximumBytes`` or
  /// holds a NUL. Names are stored as sent (a SimpleAnalytics description may hold a tab or a line
  /// break), so every name a report lists can be asked for again.
  public static func checkName(_ text: String, field: String) throws(FieldError) {
    guard text.utf8.count <= maximumBytes else {
      throw FieldError(field: field, reason: "is longer than \(maximumBytes) bytes")
    }
    guard !text.utf8.contains(0) else { throw FieldError(field: field, reason: "must not contain U+0000") }
  }
}
