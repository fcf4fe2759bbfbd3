import CoreTracker
import Foundation
import LogService
import Logging
import Testing

/// A swift-log handler that keeps every message, for asserting on the lines written.
final class CapturingLogHandler: LogHandler, @unchecked Sendable {
  // @unchecked: `messages` is only touched under `lock`; metadata/logLevel are set before logging.
  private let lock = NSLock()
  private var captured: [(Logger.Level, String)] = []
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    lock.lock()
    captured.append((event.level, event.message.description))
    lock.unlock()
  }

  var lines: [String] {
    lock.lock()
    defer { lock.unlock() }
    return captured.map(\.1)
  }

  var levels: [Logger.Level] {
    lock.lock()
    defer { lock.unlock() }
    return captured.map(\.0)
  }
}

@Suite("LogService")
struct LogServiceTests {
  private func event(_ name: String, _ parameters: EventParameters, userID: String? = nil) -> TrackedEvent {
    TrackedEvent(
      id: EventID("0193a4f2-6c1e-7abc-8def-0123456789ab")!,
      name: name,
      kind: .action,
      parameters: parameters,
      timestamp: Date(timeIntervalSince1970: 1_800_000_000.25),
      userID: userID,
      session: TrackingSession(id: 1_800_000_000, startedAt: Date(timeIntervalSince1970: 1_800_000_000), number: 1)
    )
  }

  @Test func writesOneLinePerEventWithOrderedKeyValuePairs() {
    let line = LogService.line(
      for: event("add_to_cart", ["product_id": "42", "quantity": 2, "price": 19.5, "gift": false], userID: "u-1"))
    #expect(
      line
        == "event add_to_cart kind=action id=0193a4f2-6c1e-7abc-8def-0123456789ab at=2027-01-15T08:00:00.250Z "
        + "session=1800000000 user=\"u-1\" product_id=\"42\" quantity=2 price=19.5 gift=false"
    )
  }

  @Test(arguments: [
    ("say \"hi\"", #"text="say \"hi\"""#),
    ("two\nlines", #"text="two\nlines""#),
    ("back\\slash", #"text="back\\slash""#),
    ("bell\u{7}", #"text="bell\u{7}""#),
  ])
  func escapesSoALineStaysOneLine(value: String, rendered: String) {
    let line = LogService.line(for: event("note", ["text": .string(value)]))
    #expect(line.hasSuffix(rendered))
    #expect(!line.contains("\n"))
  }

  @Test func structuredValuesAreOneLineOfJSON() {
    let line = LogService.line(
      for: event("purchase", ["items": [["item_id": "SKU-1", "note": "two\nlines", "price": 9.5]], "tags": ["a"]]))
    #expect(line.hasSuffix(#" items=[{"item_id":"SKU-1","note":"two\nlines","price":9.5}] tags=["a"]"#))
    #expect(!line.contains("\n"))
  }

  @Test func goesThroughSwiftLogAtTheChosenLevelAndCountsDelivered() async {
    let handler = CapturingLogHandler()
    let service = LogService(logger: Logger(label: "test") { _ in handler }, level: .notice)
    let tracker = Tracker(services: [service], configuration: TrackerConfiguration(emitsSessionEvents: false))
    tracker.track(GenericEvent("one", parameters: ["a": 1]))
    tracker.track(GenericEvent("two"))
    await tracker.flush()
    #expect(handler.lines.count == 2)
    #expect(handler.lines[0].hasPrefix("event one kind=event id="))
    #expect(handler.lines[0].hasSuffix(" a=1"))
    #expect(handler.levels == [.notice, .notice])
    #expect(tracker.stats.services[.log]?.delivered == 2)
    #expect(service.id == .log)
  }
}
