import CollectorReports
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `GET /v1/client-drops`: what devices reported dropping (the tracker's durable drop record, sent
/// in batches' `diagnostics`), by service and reason, over `from`/`to` (by when the reports arrived;
/// default the last 7 days) for `app`, optionally one `appName`. JSON, or CSV with `format=csv`.
/// Needs a read or admin key, or a dashboard session.
struct ClientDropController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    router.behind(collector.surface("report"), collector.keys(.read, from: .bearer, sessions: true))
      .get("/v1/client-drops") { request, _ in try await self.drops(request) }
  }

  func drops(_ request: Request) async throws -> Response {
    let query = request.form
    let format = try AnswerFormat(request)
    let filter = try Report.filter { query.get($0) }
    let result: ClientDrops
    do {
      result = try await ClientDrops.load(from: collector.store, filter)
    } catch let error as FieldError {
      throw error
    } catch {
      collector.logger.error("client drops failed: \(error)")
      throw Refusal(.serviceUnavailable, "", "storage unavailable; retry", retryAfter: 5)
    }
    guard format == .csv else { return .json(.ok, ReportController.json(result)) }
    return Response(
      status: .ok,
      headers: [
        .contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"client-drops.csv\"",
      ],
      body: ResponseBody(byteBuffer: ByteBuffer(string: result.table.csv)))
  }
}
