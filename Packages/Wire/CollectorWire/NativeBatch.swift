import Foundation
public import WireJSON

/// The collector's native batch API (`POST /v1/batch`): what `CollectorService` sends and the
/// collector decodes. One copy of these types serves both sides.
///
/// Times are integers: milliseconds since 1970 in UTC, plus the device's UTC offset in minutes where
/// the original local time matters. The server corrects clock skew with ``CollectorBatch/sentAt``:
/// `corrected = receivedAt − (sentAt − timestamp)`.
public struct CollectorBatch: Codable, Sendable, Hashable {
  /// When the client sent the request, by its own clock (ms since 1970, UTC).
  public var sentAt: Int64
  /// App, OS, device, locale and library of every event in the batch.
  public var context: EventContext
  /// The events, oldest first.
  public var events: [CollectorEvent]
  /// Counter totals since the last successful send (SimpleAnalytics' `countItem`).
  public var counters: [CollectorCounter]
  /// The client's reports of events it dropped (absent when there are none).
  public var diagnostics: [CollectorDropReport]?

  /// Creates a batch.
  public init(sentAt: Int64, context: EventContext, events: [CollectorEvent], counters: [CollectorCounter] = []) {
    self.sentAt = sentAt
    self.context = context
    self.events = events
    self.counters = counters
  }
}

/// One event on the wire.
public struct CollectorEvent: Codable, Sendable, Hashable {
  /// The event id (a UUID): the collector de-duplicates on (app, id).
  public var id: String
  /// The event name.
  public var name: String
  /// `screen_view`, `action` or `event`.
  public var kind: String
  /// When it was tracked (ms since 1970, UTC, client clock).
  public var timestamp: Int64
  /// The device's UTC offset at that time, in minutes.
  public var utcOffsetMinutes: Int
  /// The parameters, typed.
  public var parameters: JSONObject
  /// The install's anonymous id.
  public var anonymousId: String
  /// The identified user, if any.
  public var userId: String?
  /// The session id, if any.
  public var sessionId: Int64?

  /// Creates an event.
  public init(
    id: String,
    name: String,
    kind: String,
    timestamp: Int64,
    utcOffsetMinutes: Int = 0,
    parameters: JSONObject = [:],
    anonymousId: String,
    userId: String? = nil,
    sessionId: Int64? = nil
  ) {
    self.id = id
    self.name = name
    self.kind = kind
    self.timestamp = timestamp
    self.utcOffsetMinutes = utcOffsetMinutes
    self.parameters = parameters
    self.anonymousId = anonymousId
    self.userId = userId
    self.sessionId = sessionId
  }
}

/// A counter's total since the last successful send.
public struct CollectorCounter: Codable, Sendable, Hashable {
  /// The counter's name, e.g. `Foregrounded app`.
  public var name: String
  /// How many times it was counted.
  public var count: Int64
  /// When it was first counted in this batch (ms since 1970, UTC).
  public var firstCountedAt: Int64

  /// The install that counted; with the app, name and first-counted time the counter's
  /// de-duplication key on the collector.
  public var anonymousId: String?
  /// The id of the total's first increment: the collector keeps one row per id, and a resent total
  /// (grown by later increments or not) replaces it with the larger count instead of adding.
  public var id: String?

  /// Creates a counter total.
  public init(name: String, count: Int64, firstCountedAt: Int64, anonymousId: String? = nil, id: String? = nil) {
    self.name = name
    self.count = count
    self.firstCountedAt = firstCountedAt
    self.anonymousId = anonymousId
    self.id = id
  }
}

/// The collector's answer to a batch: a partial success, as Mixpanel's strict import.
///
/// Valid events are stored even when others are rejected; each rejection names the event's index,
/// its id, the field and the reason.
public struct BatchResponse: Codable, Sendable, Hashable {
  /// How many events (and counters) were stored.
  public var accepted: Int
  /// The events that were not.
  public var rejected: [Rejection]

  /// Creates a response.
  public init(accepted: Int, rejected: [Rejection] = []) {
    self.accepted = accepted
    self.rejected = rejected
  }

  /// One rejected event.
  public struct Rejection: Codable, Sendable, Hashable, Error {
    /// The event's index in the batch's `events`.
    public var index: Int
    /// The event's id, when it had one.
    public var id: String?
    /// The offending field, as a path: `events[3].name`.
    public var field: String
    /// Why, in words.
    public var reason: String

    /// Creates a rejection.
    public init(index: Int, id: String?, field: String, reason: String) {
      self.index = index
      self.id = id
      self.field = field
      self.reason = reason
    }
  }
}

/// The native API's bounds (Segment's: wire-formats.md).
public enum CollectorLimits {
  /// The largest encoded event.
  public static let maximumEventBytes = 32 * 1024
  /// The largest request body (before compression).
  public static let maximumRequestBytes = 500 * 1024
  /// The most events in one batch.
  public static let maximumEventsPerBatch = 2500
  /// The largest body the collector inflates from a compressed request (a gzip bomb stops here).
  public static let maximumDecompressedBytes = 5 * 1024 * 1024
  /// The longest event id, in characters (Segment's `messageId` < 100).
  public static let maximumIdentifierLength = 99
  /// The deepest nesting of lists and objects in one parameter value (GA4's `items` is 2).
  public static let maximumValueDepth = 4
  /// The most elements of one list or object in a parameter value.
  public static let maximumValueElements = 500
  /// The longest event name, kind, counter name, parameter key or context value, in UTF-8 bytes.
  public static let maximumNameBytes = 256
  /// The most counters in one batch.
  public static let maximumCountersPerBatch = 2500
  /// The longest free text a compatible endpoint takes where its client sets no limit (a SimpleAnalytics
  /// description or counter name), in UTF-8 bytes: four times a name, and what keeps every PostgreSQL
  /// index row that holds it under its 2,704-byte bound.
  public static let maximumFreeTextBytes = 1_024
  /// The times (ms since 1970, UTC) a request may carry: 1970-01-01 to 9999-12-31. Every time from
  /// outside is checked against this range before any arithmetic, so a skew correction or an age
  /// check can never overflow.
  public static let validTimes: ClosedRange<Int64> = 0...253_402_300_799_999

  /// Whether `text` holds a C0 control character (U+0000 to U+001F) or DEL: never part of an
  /// identifier (and NUL cannot even be stored in PostgreSQL text).
  public static func hasControlCharacter(_ text: String) -> Bool {
    text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
  }
}
