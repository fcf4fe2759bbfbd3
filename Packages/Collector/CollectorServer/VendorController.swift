import CollectorIngest
import CollectorReports
import CollectorRuntime
import CollectorStore
import CollectorVendors
import CollectorWire
import Foundation
import GA4Wire
import HTTPTypes
import Hummingbird
import Logging
import MixpanelWire
import NIOCore
import WireJSON

/// The vendor-compatible endpoints: GA4's Measurement Protocol (`/mp/collect`,
/// `/debug/mp/collect`) and Mixpanel's `/import`, storing into the same event store, checked with
/// the same rule code the client services use (GA4Wire, MixpanelWire), and answering refusals in the
/// vendor's own form. Mixpanel's `/track` is ``MixpanelTrack``.
///
/// Authentication: the write key is GA4's `api_secret` (the URL's query, as GA4 clients send it), and
/// Mixpanel's Basic-auth user name (project-token style) or password (service-account style).
struct VendorController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    for (path, route, validationOnly) in [
      ("/mp/collect", "ga4_collect", false), ("/debug/mp/collect", "ga4_debug", true),
    ] {
      router.behind(
        collector.surface(route) { refusal in
          let violation = GA4Violation(fieldPath: refusal.field, code: .valueInvalid, message: refusal.reason)
          return refusal.response(body: Self.json(GA4ValidationResponse([violation])))
        },
        collector.keys(.write, from: .query("api_secret")),
        // The validation server writes nothing: it answers whether the store has room or not.
        validationOnly
          ? BodyMiddleware(inflatedLimit: GA4Limits.requestBodyLimit)
          : collector.writeBody(inflatedLimit: GA4Limits.requestBodyLimit)
      )
      .post(RouterPath(path)) { request, context in
        try await self.ga4(request, context, route: route, validationOnly: validationOnly)
      }
    }
    router.behind(
      collector.surface("mixpanel_import") { refusal in
        let answer = MixpanelImportResponse(
          code: Int(refusal.status.code), numRecordsImported: 0, status: refusal.status.reasonPhrase,
          error: refusal.message)
        return refusal.response(body: Self.json(answer))
      },
      collector.keys(.write, from: .basic),
      collector.writeBody(limit: MixpanelLimits.maximumRequestBytes, inflatedLimit: MixpanelLimits.maximumRequestBytes)
    )
    .post("/import") { request, context in
      try await self.mixpanelImport(context, strict: request.form.get("strict") != "0")
    }
    router.behind(
      collector.surface("mixpanel_track") { refusal in
        MixpanelTrack.answer(status: refusal.status, error: refusal.message, verbose: true)
      },
      collector.writeBody(limit: MixpanelLimits.maximumRequestBytes, inflatedLimit: MixpanelLimits.maximumRequestBytes)
    )
    .post("/track") { request, context in
      try await MixpanelTrack(collector: collector).receive(request, context)
    }
  }

  // MARK: GA4 Measurement Protocol

  /// `/mp/collect` stores the valid events and answers 204, or 200 with `validationMessages` naming
  /// what it dropped (GA4 itself answers 2xx and says nothing); `/debug/mp/collect` stores nothing
  /// and answers the messages, empty when the request is valid.
  func ga4(
    _ request: Request, _ context: CollectorRequestContext, route: String, validationOnly: Bool
  ) async throws -> Response {
    let key = try context.authenticatedKey()
    // An app stream names its Firebase app, a web stream its measurement id.
    let stream = ["firebase_app_id", "measurement_id"].lazy.compactMap { field in
      request.form.get(field).flatMap { $0.isEmpty ? nil : (field, $0) }
    }.first
    guard let (streamField, firebaseAppID) = stream else {
      throw Refusal(.badRequest, "firebase_app_id", "is required in the URL (measurement_id for a web stream)")
    }
    try ReportText.check(firebaseAppID, field: streamField)
    if let problem = GA4Limits.bodyBounds.problem(in: context.body) {
      throw Refusal(.badRequest, "", "the body \(problem)")
    }
    let received: GA4ReceivedRequest
    do {
      received = try JSONDecoder().decode(GA4ReceivedRequest.self, from: Data(context.body))
    } catch {
      let problem = DecodingProblem(error)
      throw Refusal(
        .badRequest, problem.path,
        "the body is not a Measurement Protocol request: \(problem.path.isEmpty ? "it" : problem.path) \(problem.reason)"
      )
    }
    let receivedAt = EventCollector.now()
    let decoded = received.request
    var report = GA4Validator.validate(decoded, bodyBytes: context.body.count, nowMicros: receivedAt * 1000)
    for (index, problem) in received.undecodable {
      report.events[index] = [GA4Violation(fieldPath: problem.path, code: .valueInvalid, message: problem.reason)]
    }
    let twice = DuplicateKeys.paths(in: context.body).map {
      GA4Violation(fieldPath: $0, code: .valueInvalid, message: "appears twice")
    }
    let answer = Self.json(GA4ValidationResponse(report.all + twice))
    if validationOnly { return .json(.ok, answer) }
    collector.metrics.batch(size: decoded.events.count)
    let duplicates = DuplicateKeys.paths(in: context.body)
    var (rows, refused) = GA4Ingest.outcome(
      of: decoded, report: report, app: key.app, firebaseAppID: firebaseAppID, receivedAt: receivedAt,
      policy: collector.policy, duplicates: duplicates)
    rows.quarantined = GA4Quarantine.entries(
      refused: refused, body: context.body, firebaseAppID: firebaseAppID, app: key.app, receivedAt: receivedAt)
    try await collector.commit(IngestResult(rows: rows, rejected: []), key: key, route: route)
    collector.metrics.rejected(decoded.events.count - rows.events.count, reason: "invalid")
    collector.metrics.quarantined(rows.quarantined.count, route: GA4Quarantine.route)
    // Events refused past GA4's own rules (their age, a tracking plan) are named in the answer too.
    let beyond = refused.filter { report.events[$0.key] == nil }.sorted { $0.key < $1.key }.flatMap(\.value)
      .map { reason in
        let parts = reason.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        return GA4Violation(fieldPath: parts[0], code: .valueInvalid, message: parts.count > 1 ? parts[1] : reason)
      }
    guard report.isValid, twice.isEmpty, beyond.isEmpty else {
      return .json(.ok, Self.json(GA4ValidationResponse(report.all + twice + beyond)))
    }
    return Response(status: .noContent)
  }

  // MARK: Mixpanel /import

  /// Mixpanel's strict mode: 200 `{"code":200,"num_records_imported":N,"status":"OK"}` when every row
  /// is stored; 400 with `failed_records` when some are not (the valid ones are stored all the same).
  /// With `strict=0` the answer is the 200 either way, as Mixpanel's; the rows that break a rule are
  /// kept in the quarantine with their reasons all the same, never dropped unseen.
  func mixpanelImport(_ context: CollectorRequestContext, strict: Bool) async throws -> Response {
    let key = try context.authenticatedKey()
    let body = context.body
    guard body.count <= MixpanelLimits.maximumRequestBytes else {
      throw Refusal(.contentTooLarge, "", "the body is larger than \(MixpanelLimits.maximumRequestBytes) bytes")
    }
    let entries = try Self.mixpanelEntries(body)
    let (rows, failed) = try await storeMixpanel(entries, body: body, key: key, route: "mixpanel_import")
    if failed.isEmpty || !strict {
      return .json(
        .ok, Self.json(MixpanelImportResponse(code: 200, numRecordsImported: rows.events.count, status: "OK")))
    }
    let answer = MixpanelImportResponse(
      code: 400, numRecordsImported: rows.events.count, status: "Bad Request", failedRecords: failed,
      error: "some data points in the request failed validation")
    return .json(.badRequest, Self.json(answer))
  }

  /// The events of a Mixpanel body (`/import`, `/track`): each decoded or why not, a key given twice
  /// refused with its path; the body refused whole when it is neither JSON nor NDJSON, or past 2,000.
  static func mixpanelEntries(_ body: [UInt8]) throws -> [Result<MixpanelEvent, MixpanelViolation>] {
    var entries: [Result<MixpanelEvent, MixpanelViolation>]
    do {
      entries = try MixpanelBody.decode(body)
    } catch {
      throw Refusal(.badRequest, error.field, error.message)
    }
    entries = MixpanelQuarantine.refusingDuplicateKeys(entries, body: body)
    guard entries.count <= MixpanelLimits.maximumEventsPerRequest else {
      throw Refusal(
        .badRequest, "", "\(entries.count) events; at most \(MixpanelLimits.maximumEventsPerRequest) per request")
    }
    return entries
  }

  /// Stores the valid `entries` of `body` and quarantines the others (Mixpanel's rules), before the
  /// answer: the rows written and the records that failed.
  func storeMixpanel(
    _ entries: [Result<MixpanelEvent, MixpanelViolation>], body: [UInt8], key: KeyRecord, route: String
  ) async throws -> (rows: StoreBatch, failed: [MixpanelImportResponse.FailedRecord]) {
    collector.metrics.batch(size: entries.count)
    let receivedAt = EventCollector.now()
    var (rows, failed) = MixpanelIngest.rows(
      of: entries, app: key.app, receivedAt: receivedAt, policy: collector.policy)
    rows.quarantined = MixpanelQuarantine.entries(failed: failed, body: body, app: key.app, receivedAt: receivedAt)
    try await collector.commit(IngestResult(rows: rows, rejected: []), key: key, route: route)
    collector.metrics.rejected(failed.count, reason: "invalid")
    collector.metrics.quarantined(rows.quarantined.count, route: MixpanelQuarantine.route)
    return (rows, failed)
  }

  static func json(_ value: some Encodable) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
  }
}
