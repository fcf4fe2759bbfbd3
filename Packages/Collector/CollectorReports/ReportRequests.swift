public import CollectorWire
import Foundation

/// Every report, by the name the API, the dashboard and `trackerctl report` use: it owns the
/// name, the result type and the dispatch, so a report is added in one place.
public enum Report: String, CaseIterable, Sendable {
  case overview
  case topEvents = "top-events"
  case events
  case timeseries
  case activeDevices = "active-devices"
  case retention
  case breakdown
  case parameterValues = "parameter-values"
  case counters
  case funnel
  case sessions
  case revenue
  case topItems = "top-items"
  case versionAdoption = "version-adoption"
  /// The time to each funnel step, and who dropped at one (``FunnelPaths``).
  case funnelPaths = "funnel-paths"
  /// The people or devices who reached a funnel step and not the next (``UnitList``).
  case funnelDropped = "funnel-dropped"
  /// The people or devices of a retention cell (``UnitList``).
  case retained

  /// The report named `name`; throws ``FieldError`` listing the reports otherwise.
  public init(named name: String) throws(FieldError) {
    guard let report = Report(rawValue: name) else {
      throw FieldError(
        field: "report", reason: "\"\(name)\" is not a report; reports: \(Self.names.joined(separator: ", "))")
    }
    self = report
  }

  /// The names, in order.
  public static var names: [String] { allCases.map(\.rawValue) }

  /// The type of the report's result (for decoding an API answer).
  public var resultType: any ReportResult.Type {
    switch self {
    case .overview: Overview.self
    case .topEvents, .breakdown, .parameterValues, .counters: CountList.self
    case .events: EventRows.self
    case .timeseries: TimeSeries.self
    case .activeDevices: ActiveDevices.self
    case .retention: Retention.self
    case .funnel: Funnel.self
    case .sessions: Sessions.self
    case .revenue: Revenue.self
    case .topItems: TopItems.self
    case .versionAdoption: VersionAdoption.self
    case .funnelPaths: FunnelPaths.self
    case .funnelDropped, .retained: UnitList.self
    }
  }
}

/// Reports with their parameters as text: what the HTTP API, the dashboard and `trackerctl` share,
/// so a report means the same whether asked over HTTP or of a store directly, on every engine.
extension ReportEngine {
  /// Runs the report `name` with `parameter` giving each parameter's text (`app`, `from`, `to`,
  /// `platform`, `appVersion`, `osVersion`, `unit`, and the report's own); throws ``FieldError`` naming a
  /// bad parameter.
  public func run(_ name: String, parameter: (String) -> String?) async throws -> any ReportResult {
    let report = try Report(named: name)
    return try await withoutActuallyEscaping(parameter) { text in
      try await run(report, parameters: ReportParameters(text))
    }
  }

  /// Runs `report` with its parameters.
  public func run(_ report: Report, parameters: ReportParameters) async throws -> any ReportResult {
    let filter = try Report.filter(parameters.text)
    switch report {
    case .overview: return try await overview(filter)
    case .topEvents: return try await topEvents(filter, limit: try parameters.integer("limit", default: 50))
    case .events:
      return try await eventRows(
        filter, search: try EventSearch(parameters.text), limit: try parameters.integer("limit", default: 100),
        after: parameters.text("after"))
    case .timeseries:
      guard let bucket = ReportBucket(rawValue: parameters.text("bucket") ?? "day"), bucket != .week else {
        throw FieldError(field: "bucket", reason: "is hour or day")
      }
      return try await timeSeries(filter, bucket: bucket, event: parameters.text("event"))
    case .activeDevices: return try await activeDevices(filter)
    case .retention:
      let split = parameters.text("split")
      guard split == nil || split == "app-version" else {
        throw FieldError(field: "split", reason: "is app-version or left out")
      }
      return try await retention(
        filter, period: try parameters.period(), byAppVersion: split != nil, events: parameters.retentionEvents)
    case .breakdown:
      guard let dimension = ReportDimension(rawValue: parameters.text("by") ?? "platform") else {
        throw FieldError(field: "by", reason: "is platform, os-version, app-version or app-name")
      }
      return try await breakdown(filter, by: dimension)
    case .parameterValues:
      return try await parameterValues(
        filter, event: try parameters.required("event"), parameter: try parameters.required("parameter"),
        limit: try parameters.integer("limit", default: 50))
    case .counters: return try await counters(filter)
    case .funnel:
      let (steps, window) = try parameters.funnel()
      return try await funnel(filter, steps: steps, window: window, appVersion: parameters.text("funnelAppVersion"))
    case .funnelPaths, .funnelDropped:
      let (steps, window) = try parameters.funnel()
      let dropped =
        parameters.text("dropped") == nil
        ? nil : try parameters.integer("dropped", default: 1, range: 1...(Funnel.mostSteps - 1))
      guard report == .funnelPaths || dropped != nil else { throw FieldError(field: "dropped", reason: "is required") }
      let paths = try await funnelPaths(
        filter, steps: steps, window: window, droppedAt: dropped, limit: try parameters.integer("limit", default: 100))
      return report == .funnelPaths ? paths : paths.dropped ?? UnitList(unit: filter.unit, count: 0, units: [])
    case .retained:
      let cohort = try Report.time(try parameters.required("cohort"), field: "cohort", in: filter.zone)
      return try await retainedUnits(
        filter, period: try parameters.period(), events: parameters.retentionEvents, cohort: cohort,
        offset: try parameters.integer("offset", default: 0, range: 0...400),
        limit: try parameters.integer("limit", default: 100))
    case .sessions: return try await sessions(filter)
    case .revenue: return try await revenue(filter)
    case .topItems:
      return try await topItems(
        filter, category: parameters.text("category"), brand: parameters.text("brand"),
        limit: try parameters.integer("limit", default: 50))
    case .versionAdoption: return try await versionAdoption(filter)
    }
  }
}

extension Report {

  /// `app`, `from`, `to` (default: the 7 days up to now; a day is its midnight in the zone),
  /// `platform`, `appVersion`, `osVersion`, `unit` (`person`, the default, or `device`), `tz` (an
  /// IANA time zone; UTC when absent), `environment` (`production` when absent).
  public static func filter(_ parameter: (String) -> String?) throws(FieldError) -> ReportFilter {
    guard let app = parameter("app"), !app.isEmpty else { throw FieldError(field: "app", reason: "is required") }
    let zone = try ReportZone.named(parameter("tz")) ?? .utc
    var to = Int64(Date().timeIntervalSince1970 * 1000)
    if let text = parameter("to") { to = try time(text, field: "to", in: zone) }
    // `to` is within ReportTime.valid: a week before it cannot overflow (ReportFilter checks the range).
    var from = to - 7 * 86_400_000
    if let text = parameter("from") { from = try time(text, field: "from", in: zone) }
    return try ReportFilter(
      app: app, from: from, to: to, platform: parameter("platform"), appVersion: parameter("appVersion"),
      osVersion: parameter("osVersion"), appName: parameter("appName"),
      unit: try ReportUnit(parameter: parameter("unit")), zone: zone,
      environment: parameter("environment").flatMap { $0.isEmpty ? nil : $0 } ?? AppEnvironment.production)
  }

  /// `text` as a time: a day is its first instant in `zone`; a time with its offset and ms since
  /// 1970 are what they say.
  static func time(_ text: String, field: String, in zone: ReportZone) throws(FieldError) -> Int64 {
    guard let parsed = ReportTime.parse(text) else { throw FieldError(field: field, reason: ReportTime.rule) }
    return ReportTime.isDay(text) ? zone.utc(local: parsed) : parsed
  }

  /// `90`, `90s`, `30m`, `2h`, `1d` as milliseconds, at most ``longestDuration``; `nil` for anything
  /// else (the value is range-checked before it is multiplied).
  public static func duration(_ text: String) -> Int64? {
    let units: [Character: Int64] = ["s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
    var (digits, unit) = (Substring(text), Int64(1_000))
    if let last = text.last, let named = units[last] { (digits, unit) = (text.dropLast(), named) }
    guard let value = Int64(digits), value > 0, value <= longestDuration / unit else { return nil }
    return value * unit
  }

  /// The longest funnel window: 3,660 days, the longest report range.
  public static let longestDuration: Int64 = 3_660 * 86_400_000
}

/// A report's parameters as text, read with the report API's rules.
public struct ReportParameters {
  /// The text of a parameter, `nil` when absent.
  public let text: (String) -> String?

  /// Parameters read through `text`.
  public init(_ text: @escaping (String) -> String?) { self.text = text }

  /// A whole number in `range` (`default` when absent).
  func integer(_ key: String, default value: Int, range: ClosedRange<Int> = 1...1_000) throws(FieldError) -> Int {
    guard let text = text(key) else { return value }
    guard let number = Int(text), range.contains(number) else {
      throw FieldError(field: key, reason: "must be a whole number in \(range.lowerBound)...\(range.upperBound)")
    }
    return number
  }

  /// A parameter that must be present and not empty.
  func required(_ key: String) throws(FieldError) -> String {
    guard let value = text(key), !value.isEmpty else { throw FieldError(field: key, reason: "is required") }
    return value
  }

  /// A funnel's `steps` (comma-separated) and `window` (a duration, 1 day when absent).
  func funnel() throws(FieldError) -> (steps: [String], window: Int64) {
    let steps = try required("steps").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    guard let window = Report.duration(text("window") ?? "1d") else {
      throw FieldError(field: "window", reason: "is a duration such as 30m, 2h, 1d or seconds")
    }
    return (steps, window)
  }

  /// A retention's `startEvent` and `returnEvent` (any event where absent or empty).
  var retentionEvents: RetentionEvents {
    let named = { (key: String) in text(key).flatMap { $0.isEmpty ? nil : $0 } }
    return RetentionEvents(start: named("startEvent"), back: named("returnEvent"))
  }

  /// A retention's `period`: day or week (week when absent).
  func period() throws(FieldError) -> ReportBucket {
    guard let period = ReportBucket(rawValue: text("period") ?? "week"), period != .hour else {
      throw FieldError(field: "period", reason: "is day or week")
    }
    return period
  }
}
