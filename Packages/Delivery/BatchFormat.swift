public import Foundation

/// How one service turns outbox records into a request, and an answer into an outcome: the part of
/// delivery that differs per backend (the collector's batch, the SimpleAnalytics payload, GA4, Mixpanel).
///
/// ```swift
/// struct NDJSONFormat: BatchFormat {
///   let maximumRecords = 500
///   let maximumBytes = 1 << 20
///   let acceptsGzip = true
///   func batchLength(_ records: ArraySlice<OutboxRecord>) -> Int { records.count }
///   func request(for records: ArraySlice<OutboxRecord>, sentAt: Date) -> HTTPRequest {
///     HTTPRequest(url: endpoint, body: Array(records.map(\.payload).joined(separator: [10])))
///   }
/// }
/// ```
public protocol BatchFormat: Sendable {
  /// The most records in one request (the vendor's limit).
  var maximumRecords: Int { get }
  /// The most payload bytes in one request, before compression (the vendor's limit).
  var maximumBytes: Int { get }
  /// Whether the endpoint accepts `Content-Encoding: gzip` request bodies.
  var acceptsGzip: Bool { get }
  /// How many of the leading `records` can go in one request (at least 1): a format cuts a batch
  /// where its records stop fitting together (a different context, say). Default: all of them.
  func batchLength(_ records: ArraySlice<OutboxRecord>) -> Int
  /// The request carrying `records`, uncompressed; delivery gzips it when ``acceptsGzip``.
  func request(for records: ArraySlice<OutboxRecord>, sentAt: Date) -> HTTPRequest
  /// What `response` means for `records`. Default: ``RetryPolicy/outcome(status:headers:)``.
  func outcome(of response: HTTPResponse, for records: ArraySlice<OutboxRecord>) -> DeliveryOutcome
  /// The ids of the events `records` hold, oldest first, for delivery reports that ask for them.
  /// Default: none (the format does not know them).
  func eventIDs(in records: ArraySlice<OutboxRecord>) -> [String]
  /// Whether `record` counts in the service's delivered and dropped events. Default: every record
  /// does; a format with records that are not events (a drop report) says `false` for those.
  func countsAsEvent(_ record: OutboxRecord) -> Bool
}

extension BatchFormat {
  public func batchLength(_ records: ArraySlice<OutboxRecord>) -> Int { records.count }

  public func outcome(of response: HTTPResponse, for records: ArraySlice<OutboxRecord>) -> DeliveryOutcome {
    RetryPolicy.outcome(status: response.status, headers: response.headers)
  }

  public func eventIDs(in records: ArraySlice<OutboxRecord>) -> [String] { [] }

  public func countsAsEvent(_ record: OutboxRecord) -> Bool { true }
}

/// When delivery sends without being asked.
public struct FlushPolicy: Sendable, Hashable {
  /// Send when this many records wait (SimpleAnalytics: 100). `nil`: never by count.
  public var count: Int?
  /// After a failed send, the count threshold rises by this much until a send succeeds
  /// (SimpleAnalytics: 20); 0 keeps it fixed.
  public var failureIncrement: Int
  /// Send this often while records wait. `nil`: never by time.
  public var interval: TimeInterval?
  /// Write the outbox back to the disk this often while it changes (bounds what a power cut takes).
  public var syncInterval: TimeInterval
  /// How long `flush()` keeps retrying (waiting out back-off) before it returns with the error.
  public var flushTimeout: TimeInterval

  /// Creates a policy. Defaults: every 100 records or 30 s, sync every second, flush tries for 10 s.
  public init(
    count: Int? = 100,
    failureIncrement: Int = 0,
    interval: TimeInterval? = 30,
    syncInterval: TimeInterval = 1,
    flushTimeout: TimeInterval = 10
  ) {
    self.count = count
    self.failureIncrement = failureIncrement
    self.interval = interval
    self.syncInterval = syncInterval
    self.flushTimeout = flushTimeout
  }
}
