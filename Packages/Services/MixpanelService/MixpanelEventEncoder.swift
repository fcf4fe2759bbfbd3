public import CoreTracker
import Foundation
public import ServiceSupport

/// The encoding ``MixpanelService`` applies to each event on the tracker's worker, on its own: for
/// benchmarks, for tests, and for tools that want the exact `/import` bytes.
///
/// ```swift
/// var encoder = MixpanelEventEncoder(limits: .repair)
/// let body = MixpanelEventEncoder.requestBody(events.compactMap { encoder.encode($0) })
/// ```
public struct MixpanelEventEncoder: Sendable {
  private var mapper: MixpanelMapper

  /// An encoder applying `limits`; `token` is written into each event (`/track` mode).
  public init(limits: LimitPolicy = .repair, token: String? = nil) {
    mapper = MixpanelMapper(policy: limits, token: token)
  }

  /// The event's JSON (`{"event","properties"}`), or `nil` when the limits drop it.
  public mutating func encode(_ event: TrackedEvent) -> [UInt8]? {
    if case .send(let record, _) = mapper.map(event) { return record }
    return nil
  }

  /// The request body (a JSON array) for up to 2000 encoded events.
  public static func requestBody(_ events: [[UInt8]]) -> [UInt8] { MixpanelFormat.body(events[...]) }
}
