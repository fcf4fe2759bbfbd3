public import CoreTracker
public import Delivery

/// The bookkeeping of a service that enforces its backend's limits with a ``LimitPolicy``
/// (Firebase, Mixpanel): repairs counted by reason, drops counted on the delivery queue, and in
/// strict mode each violation reported.
///
/// ```swift
/// switch mapper.map(event) {
/// case .send(let record, let repairs):
///   limits.count(repairs)
///   queue.enqueue(kind: 1, timestamp: ms, payload: record)
/// case .drop(let reason, let violations):
///   limits.drop(reason, violations: violations, on: queue)
/// }
/// ```
public final class LimitEnforcement: Sendable {
  /// The policy the service applies.
  public let policy: LimitPolicy
  private let repairCounts = Locked<[String: Int]>([:])

  /// Bookkeeping for `policy`.
  public init(policy: LimitPolicy) { self.policy = policy }

  /// Counts the repairs made to one event that is sent, by reason.
  public func count(_ reasons: [String]) {
    guard !reasons.isEmpty else { return }
    repairCounts.withLock { counts in for reason in reasons { counts[reason, default: 0] += 1 } }
  }

  /// Drops one event for `reason` (counted by `queue`) and, in strict mode, reports `violations`.
  public func drop(_ reason: DropReason, violations: [any Error], on queue: DeliveryQueue) {
    queue.recordDrop(reason)
    if case .strict(let report) = policy { violations.forEach(report) }
  }

  /// The queue's counts with the repairs added.
  public func statistics(of queue: DeliveryQueue) -> ServiceStats {
    var stats = queue.statistics()
    stats.repaired = repairCounts.snapshot
    return stats
  }
}
