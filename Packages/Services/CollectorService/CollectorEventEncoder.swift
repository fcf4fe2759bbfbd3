public import CoreTracker
import Delivery
public import Foundation
import ServiceSupport

/// The encoding ``CollectorService`` applies to each event on the tracker's worker, on its own: for
/// benchmarks, tests and tools that want the exact native-batch bytes.
///
/// ```swift
/// var encoder = CollectorEventEncoder()
/// let body = CollectorEventEncoder.requestBody(events.map { encoder.encode($0) }, sentAt: Date())
/// ```
public struct CollectorEventEncoder: Sendable {
  private var encoder = RecordEncoder()

  /// An encoder.
  public init() {}

  /// The record the service stores for `event`: its context (cached while it does not change) and
  /// the event's JSON.
  public mutating func encode(_ event: TrackedEvent) -> [UInt8] { encoder.event(event) }

  /// The `/v1/batch` body for records of one context.
  public static func requestBody(_ records: [[UInt8]], sentAt: Date) -> [UInt8] {
    CollectorFormat.body(
      context: records.first.map { Array(RecordFraming.context($0)) }, events: records, counters: [], sentAt: sentAt)
  }
}
