import Foundation

/// Reports by name with their parameters as text: what the HTTP API and `trackerctl` share, so a
/// report means the same whether asked over HTTP or of a store directly.
extension Reports {
  /// The reports, by the name the API and `trackerctl report` use.
  public static let names = [
    "overview", "top-events", "events", "timeseries", "active-devices", "retention", "breakdown", "parameter-values",
    "counters", "funnel", "sessions",
  ]

  /// The result type of the report `name` (for decoding an API answer), or `nil`.
  public static func resultType(of name: String) -> (any ReportResult.Type)? {
    switch name {
    case "overview": Overview.self
    case "top-events", "breakdown", "parameter-values", "counters": CountList.self
    case "events": EventRows.self
    case "timeseries": TimeSeries.self
    case "active-devices": ActiveDevices.self
    case "retention": Retention.self
    case "funnel": Funnel.self
    case "sessions": Sessions.self
    default: nil
    }
  }

  /// Runs the report `name` with `parameter` giving each parameter's text (`app`, `from`, `to`,
  /// `platform`, `appVersion`, `osVersion`, and the report's own); throws ``ReportError`` naming a
  /// bad parameter.
  public func run(_ name: String, parameter: (String) -> String?) async throws -> any ReportResult {
    guard Self.names.contains(name) else {
      throw ReportError(
        field: "report", reason: "\"\(name)\" is not a report; reports: \(Self.names.joined(separator: ", "))")
    }
    let filter = try Self.filter(parameter)
    func integer(_ key: String, default value: Int, range: ClosedRange<Int>) throws(ReportError) -> Int {
      guard let text = parameter(key) else { return value }
      guard let number = Int(text), range.contains(number) else {
        throw ReportError(field: key, reason: "must be a whole number in \(range.lowerBound)...\(range.upperBound)")
      }
      return number
    }
    func required(_ key: String) throws(ReportError) -> String {
      guard let value = parameter(key), !value.isEmpty else { throw ReportError(field: key, reason: "is required") }
      return value
    }
    switch name {
    case "overview":
      return try await overview(filter)
    case "top-events":
      return try await topEvents(filter, limit: try integer("limit", default: 50, range: 1...1_000))
    case "events":
      return try await eventRows(
        filter, event: parameter("event"), limit: try integer("limit", default: 100, range: 1...1_000),
        after: parameter("after"))
    case "timeseries":
      guard let bucket = ReportBucket(rawValue: parameter("bucket") ?? "day"), bucket != .week else {
        throw ReportError(field: "bucket", reason: "is hour or day")
      }
      return try await timeSeries(filter, bucket: bucket, event: parameter("event"))
    case "active-devices":
      return try await activeDevices(filter)
    case "retention":
      guard let period = ReportBucket(rawValue: parameter("period") ?? "week"), period != .hour else {
        throw ReportError(field: "period", reason: "is day or week")
      }
      let split = parameter("split")
      guard split == nil || split == "app-version" else {
        throw ReportError(field: "split", reason: "is app-version or left out")
      }
      return try await retention(filter, period: period, byAppVersion: split != nil)
    case "breakdown":
      guard let dimension = Dimension(rawValue: parameter("by") ?? "platform") else {
        throw ReportError(field: "by", reason: "is platform, os-version or app-version")
      }
      return try await breakdown(filter, by: dimension)
    case "parameter-values":
      return try await parameterValues(
        filter, event: try required("event"), parameter: try required("parameter"),
        limit: try integer("limit", default: 50, range: 1...1_000))
    case "counters":
      return try await counters(filter)
    case "funnel":
      let steps = try required("steps").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
      guard let window = Self.duration(parameter("window") ?? "1d") else {
        throw ReportError(field: "window", reason: "is a duration such as 30m, 2h, 1d or seconds")
      }
      return try await funnel(filter, steps: steps, window: window, appVersion: parameter("funnelAppVersion"))
    default:
      return try await sessions(filter)
    }
  }

  /// `app`, `from`, `to` (default: the 7 days up to now), `platform`, `appVersion`, `osVersion`.
  public static func filter(_ parameter: (String) -> String?) throws(ReportError) -> ReportFilter {
    guard let app = parameter("app"), !app.isEmpty else { throw ReportError(field: "app", reason: "is required") }
    var to = Int64(Date().timeIntervalSince1970 * 1000)
    if let text = parameter("to") {
      guard let parsed = ReportTime.parse(text) else { throw ReportError(field: "to", reason: ReportTime.rule) }
      to = parsed
    }
    // `to` is within ReportTime.valid: a week before it cannot overflow (ReportFilter checks the range).
    var from = to - 7 * 86_400_000
    if let text = parameter("from") {
      guard let parsed = ReportTime.parse(text) else { throw ReportError(field: "from", reason: ReportTime.rule) }
      from = parsed
    }
    return try ReportFilter(
      app: app, from: from, to: to, platform: parameter("platform"), appVersion: parameter("appVersion"),
      osVersion: parameter("osVersion"))
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
