import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorVendors
import Foundation
import GA4Wire
import HTTPTypes
import Hummingbird
import MixpanelWire
import NIOCore

/// The vendor-compatible endpoints: GA4's Measurement Protocol (`/mp/collect`,
/// `/debug/mp/collect`) and Mixpanel's `/import`, storing into the same event store, checked with
/// the same rule code the client services use (GA4Wire, MixpanelWire).
///
/// Authentication: the write key is GA4's `api_secret` (the URL's query, as GA4 clients send it), and
/// Mixpanel's Basic-auth user name (project-token style) or password (service-account style).
extension IngestRoutes {
  // MARK: GA4 Measurement Protocol

  /// `/mp/collect` stores the valid events and answers 204, or 200 with `validationMessages` naming
  /// what it dropped (GA4 itself answers 2xx and says nothing); `/debug/mp/collect` stores nothing
  /// and answers the messages, empty when the request is valid.
  func ga4(_ request: Request, validationOnly: Bool) async -> Response {
    let route = validationOnly ? "ga4_debug" : "ga4_collect"
    do {
      let query = request.form
      let key = try await authenticate(query.secret("api_secret"), scope: .write)
      guard let firebaseAppID = query.get("firebase_app_id"), !firebaseAppID.isEmpty else {
        throw Refusal(.badRequest, "firebase_app_id", "is required in the URL", metric: "invalid")
      }
      try Identifier.check(firebaseAppID, field: "firebase_app_id")
      let body = try await Self.body(of: request)
      let decoded: GA4Request
      do {
        decoded = try JSONDecoder().decode(GA4Request.self, from: Data(body))
      } catch {
        throw Refusal(.badRequest, "", "the body is not a Measurement Protocol request: \(error)", metric: "malformed")
      }
      let receivedAt = Self.now()
      let report = GA4Validator.validate(decoded, bodyBytes: body.count, nowMicros: receivedAt * 1000)
      let answer = Self.json(GA4ValidationResponse(report.all))
      if validationOnly { return respond(route, .ok, answer) }
      collector.metrics.batch(size: decoded.events.count)
      let rows = GA4Ingest.rows(
        of: decoded, report: report, app: key.app, firebaseAppID: firebaseAppID, receivedAt: receivedAt,
        policy: collector.policy
      )
      try await store(IngestResult(rows: rows, rejected: []), key: key, route: route)
      collector.metrics.rejected(decoded.events.count - rows.events.count, reason: "invalid")
      if report.isValid {
        collector.metrics.request(route: route, status: 204)
        return Response(status: .noContent)
      }
      return respond(route, .ok, answer)
    } catch {
      let refusal = Self.refusal(error)
      let violation = GA4Violation(fieldPath: refusal.field, code: .valueInvalid, message: refusal.reason)
      return respond(route, refusal, body: Self.json(GA4ValidationResponse([violation])))
    }
  }

  // MARK: Mixpanel /import

  /// Mixpanel's strict mode: 200 `{"code":200,"num_records_imported":N,"status":"OK"}` when every row
  /// is stored; 400 with `failed_records` when some are not (the valid ones are stored all the same).
  func mixpanelImport(_ request: Request) async -> Response {
    let route = "mixpanel_import"
    do {
      let key = try await authenticate(Credentials.basic(request), scope: .write)
      let body = try await Self.body(of: request, limit: MixpanelLimits.maximumRequestBytes)
      guard body.count <= MixpanelLimits.maximumRequestBytes else {
        throw Refusal(
          .contentTooLarge, "", "the body is larger than \(MixpanelLimits.maximumRequestBytes) bytes",
          metric: "too_large")
      }
      let entries: [Result<MixpanelEvent, MixpanelViolation>]
      do {
        entries = try MixpanelBody.decode(body)
      } catch {
        throw Refusal(.badRequest, error.field, error.message, metric: "malformed")
      }
      guard entries.count <= MixpanelLimits.maximumEventsPerRequest else {
        throw Refusal(
          .badRequest, "", "\(entries.count) events; at most \(MixpanelLimits.maximumEventsPerRequest) per request",
          metric: "too_large")
      }
      collector.metrics.batch(size: entries.count)
      let (rows, failed) = MixpanelIngest.rows(
        of: entries, app: key.app, receivedAt: Self.now(), policy: collector.policy)
      try await store(IngestResult(rows: rows, rejected: []), key: key, route: route)
      collector.metrics.rejected(failed.count, reason: "invalid")
      if failed.isEmpty {
        return respond(
          route, .ok,
          Self.json(MixpanelImportResponse(code: 200, numRecordsImported: rows.events.count, status: "OK")))
      }
      return respond(
        route, .badRequest,
        Self.json(
          MixpanelImportResponse(
            code: 400, numRecordsImported: rows.events.count, status: "Bad Request", failedRecords: failed)))
    } catch {
      let refusal = Self.refusal(error)
      let answer = MixpanelImportResponse(
        code: Int(refusal.status.code), numRecordsImported: 0, status: refusal.status.reasonPhrase,
        error: refusal.message)
      return respond(route, refusal, body: Self.json(answer))
    }
  }

  static func json(_ value: some Encodable) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
  }
}
