import CoreTracker
import Delivery
import Foundation
import MixpanelWire

/// A JSON array of events, ≤ 2000 and ≤ 10 MB per request, to `/import?strict=1` (Basic auth, gzip)
/// or `/track` (the token inside each event).
struct MixpanelFormat: BatchFormat {
  let url: URL
  let authorization: String?
  let isTrack: Bool
  let maximumRecords = MixpanelLimits.maximumEventsPerRequest
  let maximumBytes = MixpanelLimits.maximumRequestBytes - 2 * MixpanelLimits.maximumEventsPerRequest
  var acceptsGzip: Bool { !isTrack }

  func request(for records: ArraySlice<OutboxRecord>, sentAt: Date) -> HTTPRequest {
    let body = Self.body(records.map(\.payload)[...])
    var headers = ["Content-Type": "application/json", "Accept": "application/json"]
    if let authorization { headers["Authorization"] = authorization }
    return HTTPRequest(url: url, headers: headers, body: body)
  }

  /// A JSON array of the events.
  static func body(_ payloads: ArraySlice<[UInt8]>) -> [UInt8] {
    var body: [UInt8] = [UInt8(ascii: "[")]
    body.reserveCapacity(payloads.reduce(2) { $0 + $1.count + 1 })
    for (index, payload) in payloads.enumerated() {
      if index > 0 { body.append(UInt8(ascii: ",")) }
      body += payload
    }
    body.append(UInt8(ascii: "]"))
    return body
  }

  /// 200: delivered. 400 with `failed_records` (strict mode): those rows dropped with their reason,
  /// the rest delivered; a 400 is never retried. 429, 502, 503 (and other 5xx) retried. `/track`
  /// answers `1` or `{"status": 1}` for success.
  func outcome(of response: HTTPResponse, for records: ArraySlice<OutboxRecord>) -> DeliveryOutcome {
    let status = response.status
    if isTrack, (200..<300).contains(status) {
      let text = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      if text == "1" || text.contains(#""status":1"#) || text.contains(#""status": 1"#) { return .delivered }
      return .drop(.rejectedByServer, error: "track refused the batch: \(text.prefix(200))")
    }
    if status == 400,
      let answer = try? JSONDecoder().decode(MixpanelImportResponse.self, from: Data(response.body)),
      let failed = answer.failedRecords, !failed.isEmpty
    {
      var rejected: [Int: String] = [:]
      for record in failed where record.index >= 0 && record.index < records.count {
        rejected[record.index] = rejected[record.index] ?? "\(record.field): \(record.message)"
      }
      return .partial(rejected: rejected)
    }
    if MixpanelRules.isRetried(status: status) || (500..<600).contains(status) {
      return .retry(
        after: response.headers["retry-after"].flatMap(RetryPolicy.retryAfterSeconds), error: "HTTP \(status)")
    }
    if status == 413 { return .split }
    if (200..<300).contains(status) { return .delivered }
    let text = String(decoding: response.body.prefix(300), as: UTF8.self)
    return .drop(.rejectedByServer, error: "HTTP \(status): \(text)")
  }
}
