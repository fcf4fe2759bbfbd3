public import CoreTracker
public import Delivery
import Foundation

/// What a vendor's mapper makes of one event.
public enum MappingOutcome<Violation: Error> {
  /// Send `record`; `repairs` lists what was changed to fit, by reason.
  case send(record: [UInt8], repairs: [String])
  /// Drop it for `reason`; `violations` are the broken rules (reported in strict mode).
  case drop(reason: DropReason, violations: [Violation])
}

/// Turns events into outbox records under a vendor's documented limits, on the tracker's worker.
public protocol EventMapper {
  /// The vendor's typed description of a broken rule.
  associatedtype Violation: Error
  /// The record for `event`, or why it is dropped.
  mutating func map(_ event: TrackedEvent) -> MappingOutcome<Violation>
}

/// The skeleton every vendor service with limits shares (Firebase, Mixpanel): map each event
/// under a lock, count its repairs or its drop under the ``LimitPolicy``, enqueue what is sent.
///
/// A service keeps one and forwards to it:
///
/// ```swift
/// public func receive(_ event: TrackedEvent) { delivery.receive(event) }
/// public func statistics() -> ServiceStats? { delivery.statistics() }
/// ```
public final class MappedDelivery<Mapper: EventMapper>: Sendable {
  /// The delivery queue underneath.
  public let queue: DeliveryQueue
  private let mapper: Locked<Mapper>
  private let limits: LimitEnforcement
  private let recordKind: UInt8

  /// Maps with `mapper` under `policy` into `queue`, storing records of `recordKind`.
  public init(queue: DeliveryQueue, policy: LimitPolicy, mapper: Mapper, recordKind: UInt8 = 1) {
    self.queue = queue
    self.mapper = Locked(mapper)
    self.limits = LimitEnforcement(policy: policy)
    self.recordKind = recordKind
  }

  /// Maps `event` and enqueues its record, or counts its drop (and reports it in strict mode).
  public func receive(_ event: TrackedEvent) {
    switch mapper.withLock({ $0.map(event) }) {
    case .send(let record, let repairs):
      limits.count(repairs)
      queue.enqueue(
        kind: recordKind, timestamp: Int64((event.timestamp.timeIntervalSince1970 * 1000).rounded()), payload: record)
    case .drop(let reason, let violations):
      limits.drop(reason, violations: violations, on: queue)
    }
  }

  /// The queue's counts with the repairs added.
  public func statistics() -> ServiceStats { limits.statistics(of: queue) }
}

/// One event's (or request's) enforcement of a vendor's limits under a ``LimitPolicy``: each
/// broken rule is repaired and counted by reason, or kept as a violation that drops the event.
/// The repair-or-violate decision, written once.
///
/// ```swift
/// if let violation = GA4Rules.checkName(key, kind: .parameter, path: path) {
///   guard let fixed = ledger.fix(violation, GA4Rules.repairedName(key, kind: .parameter),
///                                as: "parameter_name_invalid", leftOut: "parameter_left_out")
///   else { continue }
///   key = fixed
/// }
/// ```
public struct LimitLedger<Violation> {
  /// Whether the policy repairs (otherwise every broken rule is a violation).
  public let repairs: Bool
  /// What was repaired, by reason, in order.
  public var repaired: [String] = []
  /// The rules broken and not repaired.
  public var violations: [Violation] = []

  /// A ledger for `policy`.
  public init(policy: LimitPolicy) {
    if case .repair = policy { repairs = true } else { repairs = false }
  }

  /// Handles one broken rule.
  ///
  /// - Returns: under a repairing policy, `fixed` (counted as `reason`); `nil` when there is no
  ///   fix, counted as `leftOut` when given (the caller leaves the thing out) and as a violation
  ///   otherwise; always `nil` with a violation under the other policies.
  public mutating func fix<Fixed>(
    _ violation: Violation, _ fixed: @autoclosure () -> Fixed?, as reason: String, leftOut: String? = nil
  ) -> Fixed? {
    if repairs, let value = fixed() {
      repaired.append(reason)
      return value
    }
    if repairs, let leftOut {
      repaired.append(leftOut)
    } else {
      violations.append(violation)
    }
    return nil
  }

  /// Handles one broken rule whose only repair is to leave the thing out: counted as `reason` when
  /// repairing, a violation otherwise. The caller leaves it out either way.
  public mutating func leaveOut(_ violation: Violation, as reason: String) {
    _ = fix(violation, nil as Void?, as: reason, leftOut: reason)
  }

  /// Adds another ledger's entries (request-level fields shared by many events).
  public mutating func merge(_ other: LimitLedger<Violation>) {
    repaired += other.repaired
    violations += other.violations
  }
}

extension LimitLedger: Sendable where Violation: Sendable {}
