/// An entry the collector could not store as an event: kept with every reason, to be seen, fixed
/// and replayed (Docs/Collector.md, "The quarantine").
///
/// The entry is kept as a request of its own kind holding this one entry (the native batch's
/// context and `sentAt` around one event; the SimpleAnalytics payload's top-level keys around one
/// item or counter; a GA4 request around one event; one Mixpanel event), so a replay runs it
/// through the same route's rules as when it arrived. A body that could not be parsed at all is
/// kept as it came.
public struct QuarantinedEntry: Sendable, Hashable, Codable {
  /// The most bytes of an entry kept; a longer one is cut there (``isTruncated``) and cannot be
  /// replayed, only seen.
  public static let maximumEntryBytes = 64 * 1024

  /// A stable id: the route, app, time of arrival, position and entry.
  public var id: String
  /// The app (of the write key).
  public var app: String
  /// The route it arrived on: `batch`, `simple_analytics`, `ga4_collect`, `mixpanel_import`.
  public var route: String
  /// When it arrived (ms, UTC).
  public var receivedAt: Int64
  /// The entry as a request of its route holding only it (JSON text), at most ``maximumEntryBytes``.
  public var entry: String
  /// Whether the entry was cut at ``maximumEntryBytes``.
  public var isTruncated: Bool
  /// Every reason it was refused, each `field: reason`.
  public var reasons: [String]
  /// When a replay stored it, if one did.
  public var replayedAt: Int64?

  /// An entry; `entry` is cut at ``maximumEntryBytes``.
  public init(
    id: String, app: String, route: String, receivedAt: Int64, entry: String, reasons: [String],
    replayedAt: Int64? = nil
  ) {
    self.id = id
    self.app = app
    self.route = route
    self.receivedAt = receivedAt
    let bytes = Array(entry.utf8)
    self.isTruncated = bytes.count > Self.maximumEntryBytes
    self.entry = isTruncated ? String(decoding: bytes.prefix(Self.maximumEntryBytes), as: UTF8.self) : entry
    self.reasons = reasons
    self.replayedAt = replayedAt
  }

  /// The reasons as one text, a line each (how every engine stores them).
  public var reasonText: String { reasons.joined(separator: "\n") }

  /// Reasons from ``reasonText``.
  public static func reasons(from text: String) -> [String] {
    text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  }
}

/// A SimpleAnalytics submission a device made and the collector committed: what it held, in order,
/// so that a resend (the unacknowledged entries first, in order, then new ones) can be told from new
/// entries that happen to look the same (``SubmissionMemory``).
public struct StoredSubmission: Sendable, Hashable, Codable {
  /// One entry of the submission: its content fingerprint and the id it was stored under.
  public struct Entry: Sendable, Hashable, Codable {
    /// What the entry says (device, app, text, time, parameters, and its occurrence in the request).
    public var fingerprint: String
    /// The event or counter id it was stored under.
    public var id: String
    /// A counter's count as sent (0 for items): a resend never sends less.
    public var count: Int64

    /// An entry.
    public init(fingerprint: String, id: String, count: Int64 = 0) {
      self.fingerprint = fingerprint
      self.id = id
      self.count = count
    }
  }

  /// The app.
  public var app: String
  /// The device that sent it.
  public var deviceID: String
  /// When it was committed (ms, UTC).
  public var receivedAt: Int64
  /// Its items, in order.
  public var items: [Entry]
  /// Its counters, in order.
  public var counters: [Entry]

  /// A submission.
  public init(app: String, deviceID: String, receivedAt: Int64, items: [Entry], counters: [Entry]) {
    self.app = app
    self.deviceID = deviceID
    self.receivedAt = receivedAt
    self.items = items
    self.counters = counters
  }

  /// Entries as one text (`fingerprint=id=count` separated by commas), as every engine stores them.
  public static func text(_ entries: [Entry]) -> String {
    entries.map { "\($0.fingerprint)=\($0.id)=\($0.count)" }.joined(separator: ",")
  }

  /// Entries from ``text(_:)``.
  public static func entries(_ text: String) -> [Entry] {
    text.split(separator: ",").compactMap { triple in
      let parts = triple.split(separator: "=")
      guard parts.count == 3, let count = Int64(parts[2]) else { return nil }
      return Entry(fingerprint: String(parts[0]), id: String(parts[1]), count: count)
    }
  }
}

/// The quarantine and the SimpleAnalytics submission memory: what every engine keeps beside the
/// events so that no acknowledged entry is lost.
public protocol QuarantineStore: Sendable {
  /// Quarantined entries, newest first: of `app` (all apps when `nil`), at most `limit`, replayed
  /// ones too when `includeReplayed`.
  func quarantined(app: String?, limit: Int, includeReplayed: Bool) async throws -> [QuarantinedEntry]

  /// How many entries of `app` that arrived in `from..<to` (ms) are held (not replayed).
  func quarantinedCount(app: String, from: Int64, to: Int64) async throws -> Int

  /// Records the outcome of replaying the entry `id`: stored at `replayedAt`, or its new `reasons`.
  func resolveQuarantined(id: String, replayedAt: Int64?, reasons: [String]) async throws

  /// Deletes quarantined entries of `app` (all when `nil`) that arrived before `before` (ms); returns how many.
  func purgeQuarantine(app: String?, before: Int64) async throws -> Int

  /// The newest `limit` committed SimpleAnalytics submissions of a device, newest first.
  func recentSubmissions(app: String, deviceID: String, limit: Int) async throws -> [StoredSubmission]
}
