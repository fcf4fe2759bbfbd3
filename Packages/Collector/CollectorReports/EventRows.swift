public import CollectorStore
public import CollectorWire
import Foundation
public import WireJSON

/// Detail rows of one event, newest first, a page at a time (keyset pagination): every stored field
/// of each event (``StoredEvent/columns``, the one declaration of the event's columns), so that
/// `trackerctl export` and `tail` lose nothing.
public struct EventRows: ReportResult, Hashable {
  /// A page of events; `next` is the cursor of the page after it, `nil` on the last.
  public init(rows: [Row], next: String?) {
    self.rows = rows
    self.next = next
  }

  /// One event, every field the store keeps.
  public struct Row: Sendable, Hashable, Codable {
    /// The row of a stored event (its parameters as a JSON value; text that is not an object reads as `{}`).
    public init(_ event: StoredEvent) {
      occurredAt = event.occurredAt
      eventID = event.eventID
      name = event.name
      kind = event.kind
      deviceID = event.deviceID
      userID = event.userID
      sessionID = event.sessionID
      utcOffsetMinutes = event.utcOffsetMinutes
      receivedAt = event.receivedAt
      context = event.context
      parameters = StoredParameters.reported(event.parametersJSON)
    }

    /// When it happened (ms, UTC).
    public var occurredAt: Int64
    /// Its id.
    public var eventID: String
    /// Its name.
    public var name: String
    /// Its kind (`event`, `screen_view`, `action`, …).
    public var kind: String
    /// The device.
    public var deviceID: String
    /// The signed-in user, if any.
    public var userID: String?
    /// The session, if any.
    public var sessionID: Int64?
    /// The device's UTC offset then, in minutes.
    public var utcOffsetMinutes: Int
    /// When the collector received it (ms, UTC).
    public var receivedAt: Int64
    /// App, OS, device, locale, time zone and library (every ``ContextField``).
    public var context: EventContext
    /// The parameters: a JSON object in answers, keys in the order they were tracked (on every
    /// engine), values as stored (strings, exact integers, doubles, booleans, lists and objects).
    public var parameters: JSONValue

    /// The platform.
    public var platform: String { context[.platform] }
    /// The app version.
    public var appVersion: String { context[.appVersion] }
    /// The OS version.
    public var osVersion: String { context[.osVersion] }
  }

  /// The rows.
  public var rows: [Row]
  /// Pass as `after` for the next page; `nil` on the last page.
  public var next: String?

  /// The columns the dashboard and the API's CSV show.
  public var table: ReportTable {
    ReportTable(
      columns: ["time", "event", "event id", "device", "platform", "app version", "os version", "parameters"],
      rows: rows.map {
        [
          ReportTime.iso($0.occurredAt), $0.name, $0.eventID, $0.deviceID, $0.platform, $0.appVersion, $0.osVersion,
          $0.parameters.text ?? "{}",
        ]
      }
    )
  }

  /// Every stored field, for an export: the event's own, then each context field by its column name,
  /// the parameters last (as JSON).
  public var everyField: ReportTable {
    ReportTable(
      columns: ["time", "event", "kind", "event id", "device", "user", "session", "utc offset minutes", "received"]
        + ContextField.columns + ["parameters"],
      rows: rows.map { row in
        [
          ReportTime.iso(row.occurredAt), row.name, row.kind, row.eventID, row.deviceID, row.userID ?? "",
          row.sessionID.map(String.init) ?? "", String(row.utcOffsetMinutes), ReportTime.iso(row.receivedAt),
        ] + ContextField.allCases.map { row.context[$0] } + [row.parameters.text ?? "{}"]
      }
    )
  }
}

extension EventRows {
  /// The select list of every stored column of an event, each under its own name: times (see
  /// ``StoredColumnKind/time``) through `milliseconds`, the parameters as `parameters` (text).
  package static func columns(milliseconds: (String) -> String, parameters: String) -> String {
    StoredEvent.columns.map { column in
      switch column.kind {
      case .time: "\(milliseconds(column.name)) AS \(column.name)"
      case .json: parameters
      case .text, .integer: column.name
      }
    }.joined(separator: ", ")
  }

  /// The time and event id of an event-rows cursor (`<ms>:<event id>`), `nil` for none; throws
  /// ``FieldError`` for text that is not a cursor this report returned.
  package static func cursor(_ after: String?) throws(FieldError) -> (Int64, String)? {
    guard let after else { return nil }
    try ReportText.check(after, field: "after")
    let parts = after.split(separator: ":", maxSplits: 1)
    guard parts.count == 2, let time = Int64(parts[0]), ReportFilter.bounds.contains(time) else {
      throw FieldError(field: "after", reason: "is not a cursor this report returned")
    }
    return (time, String(parts[1]))
  }

  /// A page of event rows from rows of ``columns(milliseconds:parameters:)``: `page` rows, and a
  /// cursor when there is one more.
  package init(_ found: [SQLRow], page: Int) {
    let rows = found.prefix(page).map { row in Row(StoredEvent(reading: { row[$0.name] })) }
    let next = found.count > page ? rows.last.map { "\($0.occurredAt):\($0.eventID)" } : nil
    self.init(rows: Array(rows), next: next)
  }
}
