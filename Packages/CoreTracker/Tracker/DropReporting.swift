import Foundation

/// The worker's part of drop reporting: it tells the hub (the app's subscribers, the durable ledger)
/// of the drops each batch counted, and now and then hands a ``DropReport`` of what the ledger
/// holds unreported to the services that carry diagnostics.
struct DropReporting {
  /// The most often a report is handed over while drops keep coming (a flush hands one at once).
  static let interval: TimeInterval = 10

  let hub: DeliveryReportHub
  let clock: @Sendable () -> Date
  /// When the last report was handed over (the tracker's start at first: a report waits the interval
  /// or a flush, never fires for the first drop of a run).
  private var lastReport: Date
  /// The queue's drop counts already told.
  private var toldQueue = EventQueue.Counts()

  init(hub: DeliveryReportHub, clock: @escaping @Sendable () -> Date) {
    self.hub = hub
    self.clock = clock
    lastReport = clock()
  }

  /// The drops a batch counted: recorded in the ledger (in the one step that settles the journal,
  /// `step`) and told to subscribers. The queue's own drops (queue full, shut down, disk budget)
  /// were recorded where they happened: only told.
  mutating func published(
    dropped: [DropReason: Int], services: [ServiceID: ServiceStats], queue: EventQueue?,
    settling step: EventQueue.Settlement, session: SessionState?
  ) {
    let now = clock()
    var reports = dropped.filter { $0.value > 0 }.map {
      DeliveryReport(service: nil, outcome: .dropped($0.key), count: $0.value, date: now)
    }
    for (service, stats) in services {
      for (reason, count) in stats.dropped {
        reports.append(DeliveryReport(service: service, outcome: .dropped(reason), count: count, date: now))
      }
    }
    queue?.settle(
      step, session: session,
      drops: reports.compactMap { report in
        report.dropReason.map {
          DropLedger.Entry(service: report.service?.rawValue ?? "", reason: $0.rawValue, count: report.count)
        }
      })
    for report in reports { hub.receive(report, recorded: queue != nil) }
    guard let queue else { return }
    let counts = queue.snapshot
    let told = toldQueue
    toldQueue = counts
    for (reason, count) in [
      (DropReason.queueFull, counts.queueFull - told.queueFull), (.shutdown, counts.shutdown - told.shutdown),
      (.diskBudget, counts.diskBudget - told.diskBudget),
    ] where count > 0 {
      hub.receive(DeliveryReport(service: nil, outcome: .dropped(reason), count: count, date: now), recorded: true)
    }
  }

  /// Hands the services a report of the unreported drops (or the one a crash left pending), at most
  /// every ``interval`` unless `force`; not while a service lacks room or the user opted out.
  mutating func handOver(
    force: Bool, services: [any TrackerService], consent: Consent, context: TrackingContext, anonymousID: String,
    queue: EventQueue?
  ) {
    let now = clock()
    guard let queue, force || now.timeIntervalSince(lastReport) >= Self.interval, !consent.isOptedOut,
      services.allSatisfy({ $0.hasRoom() }), let (id, entries) = queue.beginDropReport()
    else { return }
    lastReport = now
    let report = DropReport(
      id: id,
      entries: entries.map {
        DropReport.Entry(
          service: $0.service.isEmpty ? nil : ServiceID($0.service), reason: DropReason($0.reason), count: $0.count)
      },
      timestamp: now, context: context, anonymousID: anonymousID)
    for service in services where consent.allows(service.id) { service.receive(report) }
    queue.endDropReport()
  }
}
