import Foundation

/// The tracker's end of delivery reports: records every drop durably (the journal's ledger), says
/// once per service and status that a write key is wrong, and fans reports out to the app's
/// subscribers (``Tracker/deliveryReports(includingEventIDs:)``, ``Tracker/onDelivery(includingEventIDs:_:)``).
final class DeliveryReportHub: Sendable {
  private struct Subscriber {
    let wantsEventIDs: Bool
    let finish: @Sendable () -> Void
    let handler: @Sendable (DeliveryReport) -> Void
  }

  private struct State {
    var subscribers: [Int: Subscriber] = [:]
    var next = 0
    /// Service and status pairs already warned about.
    var warned: Set<String> = []
  }

  private let state = Locked(State())
  private let record: @Sendable (ServiceID?, DropReason, Int) -> Void
  private let warn: @Sendable (String) -> Void

  /// - Parameters:
  ///   - record: counts a drop durably (the queue's ledger).
  ///   - warn: where a wrong write key is said out loud.
  init(
    record: @escaping @Sendable (ServiceID?, DropReason, Int) -> Void, warn: @escaping @Sendable (String) -> Void
  ) {
    self.record = record
    self.warn = warn
  }

  /// The observer the tracker attaches to `service`.
  func observer(for service: ServiceID) -> DeliveryObserver {
    DeliveryObserver(
      wantsEventIDs: { [weak self] in self?.wantsEventIDs ?? false },
      report: { [weak self] report in
        var report = report
        report.service = service
        self?.receive(report)
      })
  }

  var wantsEventIDs: Bool { state.withLock { $0.subscribers.values.contains(where: \.wantsEventIDs) } }

  func subscribe(
    wantsEventIDs: Bool, finish: @escaping @Sendable () -> Void,
    handler: @escaping @Sendable (DeliveryReport) -> Void
  ) -> Int {
    state.withLock { state in
      defer { state.next += 1 }
      state.subscribers[state.next] = Subscriber(wantsEventIDs: wantsEventIDs, finish: finish, handler: handler)
      return state.next
    }
  }

  /// Ends every stream (the tracker is going away).
  func finish() {
    let subscribers = state.withLock { state -> [Subscriber] in
      defer { state.subscribers = [:] }
      return Array(state.subscribers.values)
    }
    for subscriber in subscribers { subscriber.finish() }
  }

  func unsubscribe(_ token: Int) {
    state.withLock { $0.subscribers[token] = nil }
  }

  /// A report: its drop recorded unless `recorded` already, a wrong key said once, subscribers told.
  func receive(_ report: DeliveryReport, recorded: Bool = false) {
    if !recorded, let reason = report.dropReason { record(report.service, reason, report.count) }
    let (subscribers, warning) = state.withLock { state -> ([Subscriber], String?) in
      var warning: String?
      if case .refused(let status, _) = report.outcome, status == 401 || status == 403 {
        let key = "\(report.service?.rawValue ?? "")/\(status)"
        if state.warned.insert(key).inserted {
          warning =
            "CoreTracker: \(report.service?.rawValue ?? "a service") was refused with HTTP \(status): its write key "
            + "is wrong or revoked; events sent with it are dropped (rejected_by_server), not retried."
        }
      }
      return (Array(state.subscribers.values), warning)
    }
    if let warning { warn(warning) }
    for subscriber in subscribers {
      var copy = report
      if !subscriber.wantsEventIDs { copy.eventIDs = [] }
      subscriber.handler(copy)
    }
  }
}
