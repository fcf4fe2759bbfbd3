public import CoreTracker
import Delivery
import Foundation
public import ServiceSupport

/// The encoding ``FirebaseService`` applies to each event on the tracker's worker, on its own:
/// for benchmarks, for tests, and for tools that want the exact Measurement Protocol bytes.
///
/// ```swift
/// var encoder = FirebaseEventEncoder(limits: .repair)
/// let entries = events.compactMap { encoder.encode($0) }
/// let body = FirebaseEventEncoder.requestBody(entries)  // what POST /mp/collect carries
/// ```
public struct FirebaseEventEncoder: Sendable {
  private var mapper: GA4Mapper

  /// An encoder applying `limits`; `appInstanceID` and `consent` as in ``FirebaseService``.
  public init(
    limits: LimitPolicy = .repair,
    appInstanceID: (@Sendable (TrackedEvent) -> String)? = nil,
    consent: (@Sendable () -> GA4Consent?)? = nil
  ) {
    mapper = GA4Mapper(policy: limits, appInstanceID: appInstanceID, consent: consent)
  }

  /// The entry the service stores for `event` (request-level fields + the event's JSON), or `nil`
  /// when the limits drop it.
  public mutating func encode(_ event: TrackedEvent) -> [UInt8]? {
    if case .send(let record, _) = mapper.map(event) { return record }
    return nil
  }

  /// The request body for entries of one app instance and user (at most 25, as the service cuts them).
  public static func requestBody(_ entries: [[UInt8]]) -> [UInt8] {
    GA4Format.body(entries[...])
  }
}
