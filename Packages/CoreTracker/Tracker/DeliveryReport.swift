public import Foundation

/// What happened to some of a service's events: delivered, refused by the backend, dropped, or a
/// send that failed and will be retried. Read through ``Tracker/deliveryReports(includingEventIDs:)``
/// or ``Tracker/onDelivery(includingEventIDs:_:)``.
///
/// ```swift
/// for await report in tracker.deliveryReports() {
///   switch report.outcome {
///   case .delivered: syncedCount += report.count
///   case .refused(let status, let reasons): print("\(report.count) refused (\(status)): \(reasons)")
///   case .dropped(let reason): print("\(report.count) dropped: \(reason)")
///   case .retrying(let error): print("will retry: \(error)")
///   }
/// }
/// ```
public struct DeliveryReport: Sendable, Hashable, CustomStringConvertible {
  /// The end an event (or a batch) came to.
  public enum Outcome: Sendable, Hashable {
    /// The backend accepted the events.
    case delivered
    /// The backend refused the events for good: the HTTP status and the reasons it gave (401 and
    /// 403 mean a wrong or revoked write key).
    case refused(status: Int, reasons: [String])
    /// The events were dropped before the backend took them, for `reason` (consent, the disk budget,
    /// a vendor limit, expired, ...).
    case dropped(DropReason)
    /// A send failed (a transport error, 408, 429, 5xx); the events wait and are sent again.
    case retrying(error: String)
  }

  /// The service, or `nil` for the tracker itself (events dropped before any service took them).
  public var service: ServiceID?
  /// What happened.
  public var outcome: Outcome
  /// How many events (a refused or delivered batch, a drop).
  public var count: Int
  /// The events' ids, oldest first, when asked for and the service knows them (the collector's
  /// service does; vendor services report counts only).
  public var eventIDs: [String]
  /// When it happened.
  public var date: Date

  /// Creates a report.
  public init(service: ServiceID?, outcome: Outcome, count: Int, eventIDs: [String] = [], date: Date = Date()) {
    self.service = service
    self.outcome = outcome
    self.count = count
    self.eventIDs = eventIDs
    self.date = date
  }

  /// The reason the events count as dropped under, if they do (a refusal counts as `rejected_by_server`).
  public var dropReason: DropReason? {
    switch outcome {
    case .dropped(let reason): reason
    case .refused: .rejectedByServer
    case .delivered, .retrying: nil
    }
  }

  public var description: String {
    let who = service?.rawValue ?? "tracker"
    switch outcome {
    case .delivered: return "\(who): delivered \(count)"
    case .refused(let status, let reasons):
      let key = status == 401 || status == 403 ? " (wrong or revoked write key)" : ""
      return
        "\(who): refused \(count), HTTP \(status)\(key)\(reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; "))"
    case .dropped(let reason): return "\(who): dropped \(count) (\(reason))"
    case .retrying(let error): return "\(who): will retry \(count) (\(error))"
    }
  }
}

extension DropReason {
  /// The backend refused the events (a 4xx other than 408, 413 and 429, or a rejection in a
  /// partial-success answer).
  public static let rejectedByServer = DropReason("rejected_by_server")
}

/// Where a service sends its ``DeliveryReport``s: the tracker attaches one to every service
/// (``TrackerService/observeDelivery(_:)``).
public struct DeliveryObserver: Sendable {
  /// Whether anyone asked for event ids (a service that knows them adds them only then).
  public let wantsEventIDs: @Sendable () -> Bool
  /// Takes one report.
  public let report: @Sendable (DeliveryReport) -> Void

  /// Creates an observer.
  public init(
    wantsEventIDs: @escaping @Sendable () -> Bool = { false }, report: @escaping @Sendable (DeliveryReport) -> Void
  ) {
    self.wantsEventIDs = wantsEventIDs
    self.report = report
  }
}

/// Drops a tracker recorded (by service and reason) and had not reported yet, as it hands them to
/// the services that carry diagnostics (the collector's sends them with its next batch). The id is
/// the report's, the same when a report is handed again after a crash: the collector keeps one.
public struct DropReport: Sendable, Hashable {
  /// One service's (or the tracker's) drops for one reason.
  public struct Entry: Sendable, Hashable {
    /// The service, or `nil` for the tracker itself.
    public var service: ServiceID?
    /// Why.
    public var reason: DropReason
    /// How many events.
    public var count: Int

    /// Creates an entry.
    public init(service: ServiceID?, reason: DropReason, count: Int) {
      self.service = service
      self.reason = reason
      self.count = count
    }
  }

  /// The report's id, unique per tracker run and report.
  public var id: String
  /// The drops, by service and reason.
  public var entries: [Entry]
  /// When the report was made.
  public var timestamp: Date
  /// App, OS, device and locale of the tracker that dropped them.
  public var context: TrackingContext
  /// The install's anonymous identifier.
  public var anonymousID: String

  /// Creates a report.
  public init(id: String, entries: [Entry], timestamp: Date, context: TrackingContext, anonymousID: String) {
    self.id = id
    self.entries = entries
    self.timestamp = timestamp
    self.context = context
    self.anonymousID = anonymousID
  }
}
