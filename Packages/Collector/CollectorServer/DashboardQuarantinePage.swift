import CollectorDashboard
import CollectorReports
import CollectorRuntime
import CollectorStore
import Foundation
import Hummingbird

extension DashboardController {
  /// The quarantine page: held entries of the app by reason and the newest ones, and what the
  /// app's devices reported dropping over the page's days.
  func quarantinePage(_ context: Dashboard.Context, replayed: String?) async throws -> String {
    let app = context.app.isEmpty ? nil : context.app
    let held = try await collector.store.quarantined(app: app, limit: 100_000, includeReplayed: false)
    let counts = QuarantineCounts(held).rows
    var drops: ClientDrops?
    if app != nil, context.range != nil {
      let filter = try context.reportFilter()
      drops = try await ClientDrops.load(from: collector.store, filter)
    }
    return Dashboard.quarantine(
      drops: drops,
      counts: ReportTable(
        columns: ["route", "reason", "entries"], rows: counts.map { [$0.route, $0.reason, String($0.count)] }),
      entries: ReportTable(
        columns: ["received", "route", "id", "reasons"],
        rows: held.prefix(50).map {
          [ReportTime.iso($0.receivedAt), $0.route, $0.id, $0.reasons.joined(separator: "; ")]
        }),
      replayed: replayed.map { "Replayed: \($0)." }, context: context)
  }

  /// `POST /quarantine/replay`: an admin session's replay (its CSRF token in the form),
  /// then back to the page with the outcome.
  func replayQuarantine(_ request: Request) async throws -> Response {
    let (session, form) = try await sessionForm(request, action: "a replay")
    guard session.scope == .admin else {
      throw Refusal(.forbidden, "key", "a replay needs an admin key; this session is a read key's")
    }
    let app = form.get("app").flatMap { $0.isEmpty ? nil : $0 }
    let key = session.principal
    let report = try await QuarantineController(collector: collector).replay(app: app, by: key)
    let outcome = "\(report.stored) stored, \(report.kept) still refused"
    let next =
      "/dashboard/quarantine?app=\((app ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
      + "&replayed=\(outcome.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
    return Response(status: .seeOther, headers: [.location: next])
  }
}
