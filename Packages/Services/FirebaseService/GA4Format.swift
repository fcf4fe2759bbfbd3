import CoreTracker
import Delivery
import Foundation
import GA4Wire
import ServiceSupport

/// The Measurement Protocol request: `{request-level fields, "events": [...]}`, ≤ 25 events and
/// < 130 kB, records of one app instance / user / user properties per request.
struct GA4Format: BatchFormat {
  let url: URL
  let report: (@Sendable (any Error) -> Void)?
  let maximumRecords = GA4Limits.maximumEventsPerRequest
  /// Room for the envelope inside the 130 kB limit (record bytes repeat the request-level part, so the
  /// body is always smaller than the records' sum).
  let maximumBytes = GA4Limits.requestBodyLimit - 1_024
  let acceptsGzip = false

  func batchLength(_ records: ArraySlice<OutboxRecord>) -> Int { RecordFraming.batchLength(records) }

  func request(for records: ArraySlice<OutboxRecord>, sentAt: Date) -> HTTPRequest {
    HTTPRequest(url: url, headers: ["Content-Type": "application/json"], body: Self.body(records.map(\.payload)[...]))
  }

  /// `{request-level fields,"events":[...]}` from records sharing their request-level part.
  static func body(_ payloads: ArraySlice<[UInt8]>) -> [UInt8] {
    var body: [UInt8] = [UInt8(ascii: "{")]
    body.reserveCapacity(payloads.reduce(64) { $0 + $1.count })
    if let first = payloads.first { body += RecordFraming.context(first) }
    body += Array(#","events":["#.utf8)
    for (index, payload) in payloads.enumerated() {
      if index > 0 { body.append(UInt8(ascii: ",")) }
      body += RecordFraming.body(payload)
    }
    body += Array("]}".utf8)
    return body
  }

  /// 2xx is delivered, unless the answer lists validation messages (the validation endpoint, or a
  /// collector that says what it dropped): events named by a message are dropped with it, and a
  /// message about the request as a whole drops the batch. Each message is reported in strict mode.
  func outcome(of response: HTTPResponse, for records: ArraySlice<OutboxRecord>) -> DeliveryOutcome {
    let outcome = RetryPolicy.outcome(status: response.status, headers: response.headers)
    guard outcome == .delivered, !response.body.isEmpty,
      let answer = try? JSONDecoder().decode(GA4ValidationResponse.self, from: Data(response.body)),
      !answer.validationMessages.isEmpty
    else { return outcome }
    let violations = answer.violations
    if let report { violations.forEach(report) }
    var rejected: [Int: String] = [:]
    for violation in violations {
      guard let index = Self.eventIndex(violation.fieldPath), index < records.count else {
        return .drop(.rejectedByServer, error: violation.description)
      }
      rejected[index] = rejected[index] ?? violation.description
    }
    return .partial(rejected: rejected)
  }

  /// `events[3].params.x` → 3.
  static func eventIndex(_ path: String) -> Int? {
    guard path.hasPrefix("events[") else { return nil }
    return Int(path.dropFirst(7).prefix(while: { $0 != "]" }))
  }
}
