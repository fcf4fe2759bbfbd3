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

/// Operations: `GET /health`, `GET /metrics` (a read key: Prometheus' `authorization` setting),
/// `DELETE /v1/events` (erasure: an admin key, or an admin session with its CSRF token),
/// `GET /v1/audit` (the audit trail, admin), and the benchmark ceilings `POST /bench/body` and
/// `POST /bench/jsondecoder` when enabled.
struct OperationsController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    router.behind(collector.surface("health")).get("/health") { _, _ in await self.health() }
    router.behind(collector.surface("metrics"), collector.keys(.read, from: .bearer))
      .get("/metrics") { _, _ in self.metricsText() }
    router.behind(collector.surface("erase"), collector.keys(.admin, from: .bearer, sessions: true))
      .delete("/v1/events") { request, context in try await self.erase(request, by: context.authenticatedKey()) }
    router.behind(collector.surface("audit"), collector.keys(.admin, from: .bearer, sessions: true))
      .get("/v1/audit") { request, _ in try await self.auditTrail(request) }
    if collector.configuration.benchmarkRoutes {
      router.behind(collector.surface("bench_body"), BodyMiddleware())
        .post("/bench/body") { _, context in Response.json(.ok, Array(#"{"bytes":\#(context.body.count)}"#.utf8)) }
      router.behind(collector.surface("bench_jsondecoder"), BodyMiddleware())
        .post("/bench/jsondecoder") { _, context in
          let batch = try JSONDecoder().decode(CollectorBatch.self, from: Data(context.body))
          return Response.json(.ok, Array(#"{"accepted":\#(batch.events.count)}"#.utf8))
        }
    }
  }

  func health() async -> Response {
    do {
      try await collector.store.ping()
      let version = try await collector.store.schemaVersion()
      return .json(.ok, Array(#"{"status":"ok","store":"ready","schemaVersion":\#(version)}"#.utf8))
    } catch {
      collector.logger.error("health: the store does not answer: \(error)")
      return .json(.serviceUnavailable, Array(#"{"status":"unavailable","store":"not answering"}"#.utf8))
    }
  }

  func metricsText() -> Response {
    Response(
      status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: collector.metrics.exposition())))
  }

  /// The newest entries of the audit trail (`limit`, 1 to 1,000, default 100), newest first.
  func auditTrail(_ request: Request) async throws -> Response {
    let text = request.form.get("limit") ?? "100"
    guard let limit = Int(text), (1...1_000).contains(limit) else {
      throw Refusal(.badRequest, "limit", "is a whole number in 1...1000")
    }
    let entries: [AuditEntry]
    do {
      entries = try await collector.audit.entries(limit: limit)
    } catch {
      throw Refusal.storage("retry")
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return .json(.ok, Array(try encoder.encode(["entries": entries])))
  }

  /// Erases `subject` from its app in every environment the app has data in
  /// (``AppEnvironment``): a person's erasure reaches their test builds' events too.
  private func eraseInEveryEnvironment(_ subject: ErasureSubject) async throws -> ErasureReport {
    do {
      // The spooled rows first: none of the person's may reach the store after the erasure.
      try await collector.spool?.flush()
      let stored = try await collector.reports?.apps() ?? []
      let environments = AppEnvironment.catalog(stored).first { $0.app == subject.app }?.environments ?? []
      var total = try await collector.store.erase(subject)
      for environment in environments where environment != AppEnvironment.production {
        var scoped = subject
        scoped.app = AppEnvironment.storedApp(subject.app, environment: environment)
        let report = try await collector.store.erase(scoped)
        total = ErasureReport(
          events: total.events + report.events, counters: total.counters + report.counters,
          devices: total.devices + report.devices)
      }
      return total
    } catch {
      throw Refusal.storage("the erasure did not finish; run it again")
    }
  }

  /// Erases one device's or one user's events and counters of one app, in every environment, and
  /// records it in the audit trail.
  func erase(_ request: Request, by key: KeyRecord) async throws -> Response {
    let parameters = request.form
    guard let app = parameters.get("app"), !app.isEmpty else { throw Refusal(.badRequest, "app", "is required") }
    // Checked before the store sees them: `deviceId=victim%00x` must not erase `victim`, and
    // `deviceId=%00` must not erase every row with an empty device id.
    try ReportText.check(app, field: "app")
    for field in ["deviceId", "userId"] {
      if let value = parameters.get(field) { try ReportText.check(value, field: field) }
    }
    guard
      let subject = ErasureSubject(app: app, deviceID: parameters.get("deviceId"), userID: parameters.get("userId"))
    else {
      throw Refusal(.badRequest, "deviceId", "deviceId or userId is required")
    }
    let report = try await eraseInEveryEnvironment(subject)
    let who = [subject.deviceID.map { "device \($0)" }, subject.userID.map { "user \($0)" }].compactMap { $0 }
    await collector.audited(
      key, "erase",
      "app \(app), \(who.joined(separator: " and ")): \(report.events) events, \(report.counters) counters, "
        + "\(report.devices) devices")
    let body =
      #"{"deleted":\#(report.rows),"events":\#(report.events),"counters":\#(report.counters),"devices":\#(report.devices)}"#
    return .json(.ok, Array(body.utf8))
  }
}
