public import CollectorWire

/// One stored event: what reports read.
///
/// Times are milliseconds since 1970 in UTC; `utcOffsetMinutes` keeps the device's offset so local
/// hours can be reported. No client IP address is part of a row.
public struct StoredEvent: Sendable, Hashable {
  /// The app (from the write key that sent it).
  public var app: String
  /// The client's event id (a UUID), or a key derived from the content for SimpleAnalytics entries.
  public var eventID: String
  /// The event name.
  public var name: String
  /// The event kind (`action`, `screen`, `session_start`, ...).
  public var kind: String
  /// When it happened, corrected for the device's clock skew (ms, UTC).
  public var occurredAt: Int64
  /// The device's UTC offset in minutes at that time.
  public var utcOffsetMinutes: Int
  /// When the collector received it (ms, UTC).
  public var receivedAt: Int64
  /// The anonymous device id.
  public var deviceID: String
  /// The signed-in user, if any.
  public var userID: String?
  /// The tracker's session id, if any.
  public var sessionID: Int64?
  /// Context columns the reports filter and break down by.
  public var context: EventContext
  /// The parameters as a JSON object (text).
  public var parametersJSON: String

  /// An event row.
  public init(
    app: String,
    eventID: String,
    name: String,
    kind: String,
    occurredAt: Int64,
    utcOffsetMinutes: Int,
    receivedAt: Int64,
    deviceID: String,
    userID: String?,
    sessionID: Int64?,
    context: EventContext,
    parametersJSON: String
  ) {
    self.app = app
    self.eventID = eventID
    self.name = name
    self.kind = kind
    self.occurredAt = occurredAt
    self.utcOffsetMinutes = utcOffsetMinutes
    self.receivedAt = receivedAt
    self.deviceID = deviceID
    self.userID = userID
    self.sessionID = sessionID
    self.context = context
    self.parametersJSON = parametersJSON
  }
}

/// One counter total a client sent: `count` increments of `name` since `firstCountedAt`.
///
/// `counterID` is the de-duplication key within the app: storing a row whose id is already stored
/// keeps the larger count (a resent total may have grown by later increments, never shrunk).
public struct StoredCounter: Sendable, Hashable {
  /// The app.
  public var app: String
  /// The total's id (the client's first-increment id, or one derived from its content).
  public var counterID: String
  /// The device that counted.
  public var deviceID: String
  /// The counter's name.
  public var name: String
  /// The increments in this total.
  public var count: Int64
  /// When the first of them was counted (ms, UTC).
  public var firstCountedAt: Int64
  /// When the collector received it (ms, UTC).
  public var receivedAt: Int64
  /// The context columns.
  public var context: EventContext

  /// A counter row.
  public init(
    app: String,
    counterID: String,
    deviceID: String,
    name: String,
    count: Int64,
    firstCountedAt: Int64,
    receivedAt: Int64,
    context: EventContext
  ) {
    self.app = app
    self.counterID = counterID
    self.deviceID = deviceID
    self.name = name
    self.count = count
    self.firstCountedAt = firstCountedAt
    self.receivedAt = receivedAt
    self.context = context
  }
}

/// A key as stored: never the secret, only its SHA-256.
public struct KeyRecord: Sendable, Hashable {
  /// What a key may do.
  public enum Scope: String, Sendable, Hashable, CaseIterable {
    /// Send events for its app.
    case write
    /// Read reports, the dashboard and exports of every app; never erasure, keys or retention.
    case read
    /// Everything: reports, erasure, keys and the audit trail of every app.
    case admin

    /// Whether a key of this scope may use a route that needs `needed`: admin keys may read,
    /// nothing else stands in for another scope (an admin key cannot write events).
    public func allows(_ needed: Self) -> Bool {
      self == needed || (self == .admin && needed == .read)
    }
  }

  /// A short public id (the first characters of the key), for listing and revoking.
  public var id: String
  /// The app the key writes to (`*` for admin keys).
  public var app: String
  /// What the key may do.
  public var scope: Scope
  /// The SHA-256 of the key, lowercase hex.
  public var hash: String
  /// When it was created (ms, UTC).
  public var createdAt: Int64
  /// When it was revoked, if it was.
  public var revokedAt: Int64?

  /// A key record.
  public init(id: String, app: String, scope: Scope, hash: String, createdAt: Int64, revokedAt: Int64? = nil) {
    self.id = id
    self.app = app
    self.scope = scope
    self.hash = hash
    self.createdAt = createdAt
    self.revokedAt = revokedAt
  }
}
