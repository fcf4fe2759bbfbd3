import CollectorIngest
import CollectorReports
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import WireJSON

/// `GET /v1/reports/<name>`: every report as JSON, or CSV with `format=csv` (or `Accept: text/csv`);
/// `GET /v1/apps`: the apps with events (at most 1,000, by name) and the time zone each one's
/// reports use, `{"apps": ["dl", "ty"], "timeZones": {"dl": "UTC", "ty": "Europe/Istanbul"}}`.
///
/// Reading needs a read or admin key (`Authorization: Bearer …`) or a dashboard session; write keys
/// cannot read. Reports run through the collector's ``ReportGate``: 503 with `Retry-After` when too
/// many run or one takes longer than its budget. Every request
/// names the app and may give `from` and `to` (a day `2026-11-01`, an ISO 8601 time or ms since
/// 1970; default: the 7 days up to now), `platform`, `appVersion` and `osVersion`. A bad parameter is
/// a 400 naming it, as in the ingestion API.
struct ReportController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    let reading = router.behind(collector.surface("report"), collector.keys(.read, from: .bearer, sessions: true))
    reading.get("/v1/reports/:name") { request, context in
      try await self.report(request, name: context.parameters.get("name") ?? "")
    }
    reading.get("/v1/apps") { _, _ in try await self.apps() }
  }

  func apps() async throws -> Response {
    guard let reports = collector.reports else {
      throw Refusal(.notImplemented, "", "this store does not serve reports")
    }
    let catalog = AppEnvironment.catalog(
      try await collector.storing("apps") { try await collector.report { try await reports.apps() } })
    let apps = catalog.map(\.app)
    var json = JSONWriter(capacity: 32 + apps.count * 96)
    json.beginObject()
    json.key("apps")
    json.beginArray()
    for app in apps { json.string(app) }
    json.endArray()
    json.key("timeZones")
    json.beginObject()
    for app in apps {
      json.member(app, collector.configuration.zone(of: app).identifier)
    }
    json.endObject()
    json.key("environments")
    json.beginObject()
    for entry in catalog {
      json.key(entry.app)
      json.beginArray()
      for environment in entry.environments { json.string(environment) }
      json.endArray()
    }
    json.endObject()
    json.endObject()
    return .json(.ok, json.bytes)
  }

  func report(_ request: Request, name: String) async throws -> Response {
    guard let reports = collector.reports else {
      throw Refusal(.notImplemented, "", "this store does not serve reports")
    }
    let query = request.form
    let configuration = collector.configuration
    let format = try AnswerFormat(request)
    let report: Report
    do {
      report = try Report(named: name)
    } catch {
      throw Refusal(.notFound, error.field, error.reason)
    }
    let result = try await collector.storing("report \(name)") {
      try await collector.report {
        // `tz=` overrides the app's configured zone.
        try await reports.run(
          report,
          parameters: ReportParameters { key in
            guard key == "tz" else { return query.get(key) }
            return query.get(key) ?? query.get("app").map { configuration.zone(of: $0).identifier }
          })
      }
    }
    guard format == .csv else { return .json(.ok, Self.json(result)) }
    return Response(
      status: .ok,
      headers: [
        .contentType: "text/csv; charset=utf-8",
        .contentDisposition: "attachment; filename=\"\(report.rawValue).csv\"",
      ],
      body: ResponseBody(byteBuffer: ByteBuffer(string: result.table.csv)))
  }

  /// A report answer: fields in declaration order, event parameters in the order they were tracked.
  static func json(_ value: any ReportResult) -> [UInt8] {
    (try? OrderedJSONEncoder().encode(value)) ?? Array("{}".utf8)
  }
}
