import CollectorService
import CoreTracker
import Delivery
public import Foundation

/// `shop-demo --delivery-report`: what debug mode (``DebugLog``) says for a wrong write key, an event
/// the collector refuses, and a good batch — each a short run of a tracker with the collector's
/// service against a collector in the process: every event tracked and handed to the service, every
/// delivery outcome with the server's reason (``Tracker/onDelivery(includingEventIDs:_:)``'s reports).
public enum DeliveryCheck {
  /// Runs the three cases against a collector on `dataDirectory` and returns the lines to print:
  /// a title per case, then each line of debug mode and each warning the tracker gave.
  public static func run(dataDirectory: URL) async throws -> [String] {
    let embedded = try await EmbeddedCollector.start(dataDirectory: dataDirectory, apps: ["ty"], stopsOnSignal: false)
    let good = embedded.keys["ty"]!
    let purchase = GenericEvent(
      "purchase", kind: .action, parameters: ["currency": "XX", "value": 10, "transaction_id": "T-1"])
    let cases: [(String, String, [GenericEvent])] = [
      ("a wrong write key", "not-a-key", [GenericEvent("app_opened")]),
      ("an event the collector refuses (its currency is not ISO 4217)", good, [purchase, GenericEvent("cart_viewed")]),
      ("a good batch", good, [GenericEvent("app_opened"), GenericEvent("product_viewed")]),
    ]
    var lines: [String] = []
    for (index, (title, key, events)) in cases.enumerated() {
      lines.append("\(title):")
      lines += try await report(
        events, key: key, collector: embedded.url,
        directory: dataDirectory.appendingPathComponent("delivery-check/\(index)-\(UUID().uuidString)"))
    }
    try await embedded.stop()
    return lines
  }

  private static func report(_ events: [GenericEvent], key: String, collector: URL, directory: URL) async throws
    -> [String]
  {
    let lines = Locked<[String]>([])
    let service = try CollectorService(
      endpoint: collector, writeKey: key, directory: directory, policy: FlushPolicy(count: nil, interval: nil))
    let tracker = Tracker(
      services: [service],
      configuration: TrackerConfiguration(
        emitsSessionEvents: false, warning: { text in lines.withLock { $0.append("  warning: \(text)") } },
        debug: DebugLog { text in lines.withLock { $0.append("  \(text)") } }))
    for event in events { tracker.track(event) }
    await tracker.shutdown()
    return lines.snapshot
  }
}
