public import CollectorReports
import CollectorWire
public import Foundation

/// `trackerctl tail`: prints events as they arrive, oldest first, by polling the events report.
///
/// Each poll reads the events that occurred in the last `lookback` ms (pages of 1,000, newest first)
/// and prints those not printed before. An event that arrives later than `lookback` after it
/// occurred (an outbox that was offline for longer) is not shown; `export` and the reports see it.
public struct Tail: Sendable {
  /// Where to read.
  public let origin: ReportOrigin
  /// `app`, and optionally `event`, `platform`, `appVersion`, `osVersion` (as the reports take them).
  public let parameters: [String: String]
  /// How far back each poll looks, ms.
  public let lookback: Int64
  /// The clock (ms since 1970).
  public let now: @Sendable () -> Int64

  private var seen: [String: Int64] = [:]

  /// A tail of `origin`.
  public init(
    origin: ReportOrigin, parameters: [String: String], lookback: Int64 = 600_000,
    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
  ) throws {
    guard lookback >= 1_000 else { throw CommandError("--lookback must be at least 1s") }
    guard parameters["app"]?.isEmpty == false else { throw CommandError("tail needs --app") }
    self.origin = origin
    self.parameters = parameters
    self.lookback = lookback
    self.now = now
  }

  /// One poll: the events not returned before, oldest first.
  public mutating func poll() async throws -> [EventRows.Row] {
    let end = now()
    var page = parameters
    // A minute ahead: devices whose clocks run fast still show.
    page["from"] = String(end - lookback)
    page["to"] = String(end + 60_000)
    page["limit"] = "1000"
    var fresh: [EventRows.Row] = []
    var cursor: String?
    repeat {
      if let cursor { page["after"] = cursor }
      guard let rows = try await origin.report("events", parameters: page).result as? EventRows else { break }
      fresh += rows.rows.filter { seen[$0.eventID] == nil }
      cursor = rows.next
    } while cursor != nil
    for row in fresh { seen[row.eventID] = row.occurredAt }
    seen = seen.filter { $0.value >= end - lookback - 60_000 }
    return fresh.sorted { ($0.occurredAt, $0.eventID) < ($1.occurredAt, $1.eventID) }
  }

  /// One event as a terminal line: time, name, device, platform and version, parameters.
  public static func line(_ row: EventRows.Row) -> String {
    "\(ReportTime.iso(row.occurredAt))  \(row.name)  \(row.deviceID)  \(row.platform) \(row.appVersion)  "
      + "\(row.parameters.text ?? "{}")\n"
  }

  /// One event as an NDJSON line (as `export` writes it).
  public static func json(_ row: EventRows.Row) throws -> String { try TrackerCtl.ndjsonLine(row) }
}
