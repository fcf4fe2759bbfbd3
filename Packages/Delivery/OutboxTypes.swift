public import CoreTracker

/// Settings of an ``Outbox``.
public struct OutboxConfiguration: Sendable, Hashable {
  /// The most bytes the outbox's segment files take on disk together. Default 48 MiB: 100,000
  /// typical events (five parameters; about 370 bytes each with the record header, their context
  /// stored once apart, ``RecordContexts``) with a third to spare for larger ones, a bound an app's
  /// disk budget tolerates for data that is normally sent within seconds.
  public var maximumBytes: Int
  /// The most records waiting for delivery. Default 200,000, so that for typical events the byte
  /// bound is the one that binds.
  public var maximumRecords: Int
  /// The size of one segment file. Default 1 MiB; a record must fit in one segment.
  public var segmentBytes: Int

  /// Creates a configuration; at least two segments always fit.
  public init(maximumBytes: Int = 48 << 20, maximumRecords: Int = 200_000, segmentBytes: Int = 1 << 20) {
    self.segmentBytes = max(4096, segmentBytes)
    self.maximumBytes = max(2 * self.segmentBytes, maximumBytes)
    self.maximumRecords = max(1, maximumRecords)
  }
}

/// A place in the outbox: a segment and a byte offset in it.
public struct OutboxPosition: Sendable, Hashable, Comparable {
  /// The segment's sequence number.
  public var segment: UInt64
  /// The byte offset in the segment.
  public var offset: Int

  public static func < (lhs: OutboxPosition, rhs: OutboxPosition) -> Bool {
    (lhs.segment, lhs.offset) < (rhs.segment, rhs.offset)
  }
}

/// One stored record.
public struct OutboxRecord: Sendable, Hashable {
  /// What the record holds, as the service that wrote it defines (event, counter, context, ...).
  public var kind: UInt8
  /// When the record was made (ms since 1970), for the maximum event age.
  public var timestamp: Int64
  /// The service's encoding of the record.
  public var payload: [UInt8]
  /// The position just after the record: acknowledge it to remove the record and all before it.
  public var end: OutboxPosition
}

/// The outbox's counts.
public struct OutboxStats: Sendable, Hashable {
  /// Records waiting for delivery.
  public var records: Int
  /// Bytes of those records (headers included).
  public var bytes: Int
  /// Bytes the segment files take on disk.
  public var diskBytes: Int
  /// Records dropped by the outbox, by reason (`outbox_full`, `record_too_large`, `outbox_io_error`).
  public var dropped: [DropReason: Int]
}

extension DropReason {
  /// The outbox reached its byte or record bound; the oldest records made room.
  public static let outboxFull = DropReason("outbox_full")
  /// A record larger than a segment.
  public static let recordTooLarge = DropReason("record_too_large")
  /// The outbox could not create or map a file.
  public static let outboxIOError = DropReason("outbox_io_error")
}
