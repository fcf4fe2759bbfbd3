import CollectorDashboard
import CollectorReports
import CollectorStore
import TrackingPlan

extension DashboardController {
  /// The Plan page: the app's newest plan against the events seen over the page's days (any
  /// environment's, as the page's filter says), and the quarantine's plan violations.
  func planPage(_ context: Dashboard.Context, reports: any ReportEngine) async throws -> String {
    let versions = collector.configuration.plans.byApp[context.app] ?? []
    guard let newest = versions.first, context.range != nil else {
      return Dashboard.plan(
        nil, versions: [], health: nil, violations: ReportTable(columns: [], rows: []), context: context)
    }
    let filter = try context.reportFilter()
    let seen = try await reports.topEvents(filter, limit: 1_000)
    let held = try await collector.store.quarantined(app: filter.storedApp, limit: 100_000, includeReplayed: false)
    return Dashboard.plan(
      newest, versions: versions.map(\.version), health: PlanHealth.health(newest, seen: seen),
      violations: PlanHealth.violations(held.flatMap(\.reasons)), context: context)
  }
}
