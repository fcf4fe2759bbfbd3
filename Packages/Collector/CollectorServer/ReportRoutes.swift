import CollectorIngest
import CollectorReports
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /v1/reports/<name>`: every report as JSON, or CSV with `format=csv` (or `Accept: text/csv`).
///
/// Reading needs an admin key (`Authorization: Bearer …`); write keys cannot read. Every request
/// names the app and may give `from` and `to` (a day `2026-11-01`, an ISO 8601 time or ms since
/// 1970; default: the 7 days up to now), `platform`, `appVersion` and `osVersion`. A bad parameter is
/// a 400 naming it, as in the ingestion API.
struct ReportRoutes: Sendable {
  let collector: EventCollector
  let routes: IngestRoutes

  static let names = [
    "overview", "top-events", "events", "timeseries", "active-devices", "retention", "breakdown", "parameter-values",
    "counters", "funnel", "sessions",
  ]

  func register(on router: Router<BasicRequestContext>) {
    router.get("/v1/reports/:name") { request, context in
      await self.report(request, name: context.parameters.get("name") ?? "")
    }
  }

  func report(_ request: Request, name: String) async -> Response {
    let route = "report"
    do {
      _ = try await routes.authenticate(routes.bearer(request), scope: .admin)
      guard let reports = collector.reports else {
        throw Refusal(.notImplemented, "", "this store does not serve reports", metric: "invalid")
      }
      let query = request.uri.queryParameters
      let result: any ReportResult
      do {
        result = try await run(name, reports: reports, query: { query.get($0) })
      } catch let error as ReportError {
        throw Refusal(.badRequest, error.field, error.reason, metric: "invalid")
      } catch let refusal as Refusal {
        throw refusal
      } catch {
        throw Refusal(.serviceUnavailable, "", "storage unavailable: \(error)", retryAfter: 5, metric: "storage")
      }
      let wantsCSV =
        query.get("format") == "csv" || (request.headers[.accept]?.contains("text/csv") ?? false)
      if wantsCSV {
        collector.metrics.request(route: route, status: 200)
        return Response(
          status: .ok,
          headers: [
            .contentType: "text/csv; charset=utf-8",
            .contentDisposition: "attachment; filename=\"\(name).csv\"",
          ],
          body: ResponseBody(byteBuffer: ByteBuffer(string: result.table.csv))
        )
      }
      return routes.respond(route, .ok, Self.json(result))
    } catch {
      let refusal = IngestRoutes.refusal(error)
      return routes.respond(route, refusal, body: IngestRoutes.errorJSON(refusal))
    }
  }

  /// Parses the request's parameters and runs the named report.
  func run(_ name: String, reports: Reports, query: (String) -> String?) async throws -> any ReportResult {
    let filter = try Self.filter(query)
    func integer(_ key: String, default value: Int, range: ClosedRange<Int>) throws(ReportError) -> Int {
      guard let text = query(key) else { return value }
      guard let number = Int(text), range.contains(number) else {
        throw ReportError(field: key, reason: "must be a whole number in \(range.lowerBound)...\(range.upperBound)")
      }
      return number
    }
    func required(_ key: String) throws(ReportError) -> String {
      guard let value = query(key), !value.isEmpty else { throw ReportError(field: key, reason: "is required") }
      return value
    }
    switch name {
    case "overview":
      return try await reports.overview(filter)
    case "top-events":
      return try await reports.topEvents(filter, limit: try integer("limit", default: 50, range: 1...1_000))
    case "events":
      return try await reports.eventRows(
        filter, event: try required("event"), limit: try integer("limit", default: 100, range: 1...1_000),
        after: query("after"))
    case "timeseries":
      guard let bucket = ReportBucket(rawValue: query("bucket") ?? "day"), bucket != .week else {
        throw ReportError(field: "bucket", reason: "is hour or day")
      }
      return try await reports.timeSeries(filter, bucket: bucket, event: query("event"))
    case "active-devices":
      return try await reports.activeDevices(filter)
    case "retention":
      guard let period = ReportBucket(rawValue: query("period") ?? "week"), period != .hour else {
        throw ReportError(field: "period", reason: "is day or week")
      }
      let split = query("split")
      guard split == nil || split == "app-version" else {
        throw ReportError(field: "split", reason: "is app-version or left out")
      }
      return try await reports.retention(filter, period: period, byAppVersion: split != nil)
    case "breakdown":
      guard let dimension = Reports.Dimension(rawValue: query("by") ?? "platform") else {
        throw ReportError(field: "by", reason: "is platform, os-version or app-version")
      }
      return try await reports.breakdown(filter, by: dimension)
    case "parameter-values":
      return try await reports.parameterValues(
        filter, event: try required("event"), parameter: try required("parameter"),
        limit: try integer("limit", default: 50, range: 1...1_000))
    case "counters":
      return try await reports.counters(filter)
    case "funnel":
      let steps = try required("steps").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
      guard let window = Self.duration(query("window") ?? "1d") else {
        throw ReportError(field: "window", reason: "is a duration such as 30m, 2h, 1d or seconds")
      }
      return try await reports.funnel(filter, steps: steps, window: window, appVersion: query("funnelAppVersion"))
    case "sessions":
      return try await reports.sessions(filter)
    default:
      throw Refusal(
        .notFound, "report", "\"\(name)\" is not a report; reports: \(Self.names.joined(separator: ", "))",
        metric: "invalid")
    }
  }

  /// `app`, `from`, `to`, `platform`, `appVersion`, `osVersion`.
  static func filter(_ query: (String) -> String?) throws(ReportError) -> ReportFilter {
    guard let app = query("app"), !app.isEmpty else { throw ReportError(field: "app", reason: "is required") }
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    var to = now
    if let text = query("to") {
      guard let parsed = ReportTime.parse(text) else {
        throw ReportError(field: "to", reason: "is a day (2026-11-01), an ISO 8601 time or ms since 1970")
      }
      to = parsed
    }
    var from = to - 7 * 86_400_000
    if let text = query("from") {
      guard let parsed = ReportTime.parse(text) else {
        throw ReportError(field: "from", reason: "is a day (2026-11-01), an ISO 8601 time or ms since 1970")
      }
      from = parsed
    }
    return try ReportFilter(
      app: app, from: from, to: to, platform: query("platform"), appVersion: query("appVersion"),
      osVersion: query("osVersion"))
  }

  /// `90`, `90s`, `30m`, `2h`, `1d` as milliseconds.
  static func duration(_ text: String) -> Int64? {
    let units: [Character: Int64] = ["s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
    if let last = text.last, let unit = units[last], let value = Int64(text.dropLast()), value > 0 {
      return value * unit
    }
    if let seconds = Int64(text), seconds > 0 { return seconds * 1_000 }
    return nil
  }

  static func json(_ value: any ReportResult) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
  }
}
