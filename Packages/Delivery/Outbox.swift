public import CoreTracker
public import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A durable, bounded, append-only queue of records in memory-mapped segment files.
///
/// **Durability.** `append` copies the record into a shared memory mapping: no system call, and
/// the bytes are in the kernel's page cache the moment it returns, so they survive the process
/// being killed (`kill -9`, a crash). A power cut can take what the kernel has not written back;
/// ``sync()`` writes it back and waits (delivery calls it on an interval).
///
/// **Torn records.** Every record carries a CRC-32 and its length is stored last, so a record cut by
/// a crash — or a file truncated or with garbage appended — is detected on reopening: everything
/// before the damage is kept, the damage and what follows it in that segment are discarded.
///
/// **Bounds.** At most ``OutboxConfiguration/maximumRecords`` records and
/// ``OutboxConfiguration/maximumBytes`` on disk; when full, the oldest records are dropped and
/// counted (`outbox_full`).
///
/// **Ownership.** It owns one directory and creates, reads and deletes only its own files there
/// (`segment-<16 hex digits>.ctq`, `cursor.ctq` and `owner.lock`); anything else in the directory is
/// left alone. It holds an exclusive `flock` on `owner.lock` while it lives, so a second outbox on the
/// same directory (another process: an app extension) is refused instead of corrupting it; services
/// open theirs with ``openRun(in:configuration:)``, which gives each process run its own.
///
/// `@unchecked Sendable`: all mutable state is accessed under `lock`.
public final class Outbox: @unchecked Sendable {
  static let segmentHeaderSize = 16
  static let recordHeaderSize = 20
  static let magic: UInt32 = 0x3151_5443  // "CTQ1"
  static let cursorName = "cursor.ctq"
  static let ownerName = "owner.lock"

  /// The directory the outbox owns.
  public let directory: URL
  /// Its bounds.
  public let configuration: OutboxConfiguration

  struct Segment {
    let sequence: UInt64
    let file: MappedFile
    var end: Int  // offset after the last valid record
  }

  let lock = NSLock()
  var segments: [Segment] = []
  var cursor: OutboxPosition
  var queuedRecords = 0
  var queuedBytes = 0
  var dropped: [DropReason: Int] = [:]
  /// The end of the batch being sent, if any, and the ends of its records evicted meanwhile (oldest
  /// first): they are counted when the send's outcome is known (delivered, or dropped), not at eviction.
  var inFlightEnd: OutboxPosition?
  var evictedInFlight: [OutboxPosition] = []
  let cursorFile: OutboxCursorFile
  private let owner: FileLock
  /// Outboxes of ended runs whose records wait to move into this one as room allows
  /// (``Outbox/openRun(in:configuration:)``), behind their own lock.
  let waitingRuns = Locked<[WaitingRun]>([])
  /// Told of every record the outbox drops, with the reason (the delivery queue's reports).
  private let dropObserver = Locked<(@Sendable (DropReason, Int) -> Void)?>(nil)
  /// Drops counted under the lock, told to the observer once it is released.
  private var dropNotes: [(DropReason, Int)] = []

  /// Opens the outbox in `directory` (created if needed), recovering every valid record left there.
  ///
  /// - Throws: ``FileError`` when a file cannot be made or mapped, or (`EWOULDBLOCK`) when another
  ///   outbox, in this process or another one, has the directory open.
  public convenience init(directory: URL, configuration: OutboxConfiguration = OutboxConfiguration()) throws {
    try self.init(directory: directory, configuration: configuration, owner: nil)
  }

  /// Opens the outbox in `directory`, with its `owner.lock` already held (`owner`) or taken now.
  init(directory: URL, configuration: OutboxConfiguration, owner: FileLock?) throws {
    self.directory = directory
    self.configuration = configuration
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    guard let owner = try owner ?? FileLock.acquire(directory.appendingPathComponent(Self.ownerName), creating: true)
    else {
      throw FileError.io("lock \(directory.lastPathComponent) (in use by another outbox)", EWOULDBLOCK)
    }
    self.owner = owner
    cursorFile = try OutboxCursorFile(url: directory.appendingPathComponent(Self.cursorName))
    cursor = cursorFile.stored
    try recover()
  }

  /// Calls `observer` with every drop from now on (reason and count), after the outbox's lock is
  /// released (it may read the outbox).
  public func observeDrops(_ observer: @escaping @Sendable (DropReason, Int) -> Void) {
    dropObserver.withLock { $0 = observer }
  }

  /// Counts `count` records dropped for `reason`; the observer is told once the lock is released
  /// (``unlockAndNotify()``), so it may read the outbox. Lock held.
  func countDrop(_ reason: DropReason, _ count: Int = 1) {
    guard count > 0 else { return }
    dropped[reason, default: 0] += count
    dropNotes.append((reason, count))
  }

  /// Releases the lock, then tells the observer of the drops counted while it was held.
  private func unlockAndNotify() {
    let notes = dropNotes
    dropNotes.removeAll()
    lock.unlock()
    guard !notes.isEmpty, let observer = dropObserver.snapshot else { return }
    for (reason, count) in notes { observer(reason, count) }
  }

  // MARK: Writing

  /// Appends a record. Never blocks on the disk; when the outbox is full the oldest records make room.
  ///
  /// - Returns: `false` when the record was dropped (too large for a segment, or a file could not be
  ///   made), counted in ``stats``; and for an empty payload, which is not a record.
  @discardableResult
  public func append(kind: UInt8, timestamp: Int64, payload: some Collection<UInt8>) -> Bool {
    guard !payload.isEmpty else { return false }
    let size = Self.recordSize(payload.count)
    lock.lock()
    defer { unlockAndNotify() }
    guard Self.segmentHeaderSize + size <= configuration.segmentBytes else {
      countDrop(.recordTooLarge)
      return false
    }
    while queuedRecords >= configuration.maximumRecords { dropOldestRecord() }
    if segments.isEmpty || segments[segments.count - 1].end + size > configuration.segmentBytes {
      do {
        try addSegment()
      } catch {
        countDrop(.outboxIOError)
        return false
      }
    }
    let index = segments.count - 1
    let offset = segments[index].end
    let base = segments[index].file.base + offset
    // Body first, then checksum, then the length: a record is only visible once it is complete.
    base.storeBytes(of: timestamp.littleEndian, toByteOffset: 8, as: Int64.self)
    base.storeBytes(of: kind, toByteOffset: 16, as: UInt8.self)
    let body = base + Self.recordHeaderSize
    var copied = 0
    payload.withContiguousStorageIfAvailable { buffer in
      body.copyMemory(from: buffer.baseAddress!, byteCount: buffer.count)
      copied = buffer.count
    }
    if copied != payload.count {
      for (index, byte) in payload.enumerated() { body.storeBytes(of: byte, toByteOffset: index, as: UInt8.self) }
    }
    let checksum = Self.checksum(base, payloadCount: payload.count)
    base.storeBytes(of: checksum.littleEndian, toByteOffset: 4, as: UInt32.self)
    base.storeBytes(of: UInt32(payload.count).littleEndian, toByteOffset: 0, as: UInt32.self)
    segments[index].end += size
    queuedRecords += 1
    queuedBytes += size
    return true
  }

  /// Writes every segment's pages to the disk and waits: what a power cut could take until now is
  /// on the disk afterwards.
  public func sync() {
    lock.lock()
    let files = segments.map(\.file)
    lock.unlock()
    for file in files { file.sync() }
  }

  // MARK: Reading

  /// Up to `maximumRecords` records (and `maximumBytes` of payload) after the delivered ones, oldest
  /// first, starting at `position` when given (to read past records already in flight).
  public func read(maximumRecords: Int, maximumBytes: Int = .max, after position: OutboxPosition? = nil)
    -> [OutboxRecord]
  {
    lock.lock()
    defer { lock.unlock() }
    var result: [OutboxRecord] = []
    var bytes = 0
    var position = max(position ?? cursor, cursor)
    for segment in segments where segment.sequence >= position.segment {
      var offset =
        segment.sequence == position.segment ? max(position.offset, Self.segmentHeaderSize) : Self.segmentHeaderSize
      while offset < segment.end, result.count < maximumRecords {
        let base = segment.file.base + offset
        let length = Int(UInt32(littleEndian: base.load(fromByteOffset: 0, as: UInt32.self)))
        if !result.isEmpty && bytes + length > maximumBytes { return result }
        let end = offset + Self.recordSize(length)
        result.append(
          OutboxRecord(
            kind: base.load(fromByteOffset: 16, as: UInt8.self),
            timestamp: Int64(littleEndian: base.loadUnaligned(fromByteOffset: 8, as: Int64.self)),
            payload: Array(UnsafeRawBufferPointer(start: base + Self.recordHeaderSize, count: length)),
            end: OutboxPosition(segment: segment.sequence, offset: end)
          )
        )
        bytes += length
        offset = end
      }
      if result.count >= maximumRecords { break }
      position = OutboxPosition(segment: segment.sequence + 1, offset: 0)
    }
    return result
  }

  /// Reads the next batch to send, as ``read(maximumRecords:maximumBytes:after:)`` does, and marks
  /// it in flight in the same step: a record evicted to stay within the bounds from then on shares
  /// the batch's outcome (``acknowledge(through:droppedAs:)`` or ``endInFlight()``).
  public func readForSending(maximumRecords: Int, maximumBytes: Int = .max) -> [OutboxRecord] {
    let records = read(maximumRecords: maximumRecords, maximumBytes: maximumBytes)
    lock.lock()
    defer { unlockAndNotify() }
    settleEvictedInFlight()
    // Evicted between the read and now: such a record is not sent (the batch starts after it).
    inFlightEnd = records.first(where: { $0.end > cursor }).map { _ in records.last!.end }
    return records.filter { $0.end > cursor }
  }

  /// The batch in flight was cut to end at `end`: records evicted beyond it are dropped now.
  public func narrowInFlight(to end: OutboxPosition) {
    lock.lock()
    defer { unlockAndNotify() }
    guard let current = inFlightEnd, end < current else { return }
    let beyond = evictedInFlight.filter { $0 > end }.count
    countDrop(.outboxFull, beyond)
    evictedInFlight.removeLast(beyond)
    inFlightEnd = end
  }

  /// Removes every record up to `position` (delivered, or given up on) and persists the fact.
  ///
  /// - Parameter reason: `nil` for delivered records; a reason to count them as dropped.
  /// - Returns: how many records this removed (records the outbox had already dropped to stay
  ///   within its bounds are not counted again).
  @discardableResult
  public func acknowledge(through position: OutboxPosition, droppedAs reason: DropReason? = nil) -> Int {
    lock.lock()
    defer { unlockAndNotify() }
    // Records of the in-flight batch evicted while it was sent share its outcome.
    let shared = evictedInFlight.prefix { $0 <= position }.count
    evictedInFlight.removeFirst(shared)
    var removed = shared
    if let end = inFlightEnd, position >= end { settleEvictedInFlight() }
    while cursor < position, let record = recordSize(at: cursor) {
      removed += 1
      queuedRecords -= 1
      queuedBytes -= record.size
      cursor = record.next
    }
    if let reason { countDrop(reason, removed) }
    removeSegmentsBeforeCursor()
    cursorFile.write(cursor)
    return removed
  }

  /// The batch being sent will not be acknowledged (it is retried later, or split): records evicted
  /// from it meanwhile are counted as dropped (`outbox_full`) now.
  public func endInFlight() {
    lock.lock()
    defer { unlockAndNotify() }
    settleEvictedInFlight()
  }

  /// Ends the in-flight state; records evicted from it and not yet settled count as dropped. Lock held.
  private func settleEvictedInFlight() {
    countDrop(.outboxFull, evictedInFlight.count)
    inFlightEnd = nil
    evictedInFlight.removeAll()
  }

  /// Whether another record fits without evicting one: fewer records than the bound, and room for
  /// one more segment file. A tracker with a journal waits while this is `false`.
  public var hasRoom: Bool {
    lock.lock()
    defer { lock.unlock() }
    return queuedRecords < configuration.maximumRecords
      && segments.count < configuration.maximumBytes / configuration.segmentBytes
  }

  /// Counts one evicted record: dropped, or held with the in-flight batch it belongs to.
  func countEviction(_ record: (size: Int, next: OutboxPosition)) {
    if let end = inFlightEnd, record.next <= end {
      evictedInFlight.append(record.next)
    } else {
      countDrop(.outboxFull)
    }
  }

  /// The position after the newest record: everything appended so far lies before it.
  public var endPosition: OutboxPosition {
    lock.lock()
    defer { lock.unlock() }
    guard let last = segments.last else { return cursor }
    return OutboxPosition(segment: last.sequence, offset: last.end)
  }

  /// The position after the newest delivered (or dropped) record.
  public var deliveredPosition: OutboxPosition {
    lock.lock()
    defer { lock.unlock() }
    return cursor
  }

  /// The counts: waiting records and bytes, disk use, drops by reason.
  public var stats: OutboxStats {
    // Ended runs' records first, apart: adoption holds their lock while it appends here.
    let waiting = waitingRuns.withLock { $0.reduce(0) { $0 + $1.outbox.stats.records } }
    lock.lock()
    defer { lock.unlock() }
    return OutboxStats(
      // Records evicted from the batch in flight wait for its outcome like the others.
      records: queuedRecords + evictedInFlight.count + waiting,
      bytes: queuedBytes,
      diskBytes: segments.count * configuration.segmentBytes,
      dropped: dropped
    )
  }

  // MARK: Internals (called with the lock held)

  static func recordSize(_ payload: Int) -> Int { (recordHeaderSize + payload + 3) & ~3 }

  static func checksum(_ base: UnsafeMutableRawPointer, payloadCount: Int) -> UInt32 {
    let head = CRC32.checksum(UnsafeRawBufferPointer(start: base + 8, count: 9))
    return CRC32.checksum(UnsafeRawBufferPointer(start: base + recordHeaderSize, count: payloadCount), continuing: head)
  }

  /// The record at `position` (size and the position after it), following into the next segment
  /// at a segment's end; `nil` at the end of the outbox.
  func recordSize(at position: OutboxPosition) -> (size: Int, next: OutboxPosition)? {
    guard let index = segments.firstIndex(where: { $0.sequence >= position.segment }) else { return nil }
    var segment = segments[index]
    var offset =
      segment.sequence == position.segment ? max(position.offset, Self.segmentHeaderSize) : Self.segmentHeaderSize
    if offset >= segment.end {
      guard index + 1 < segments.count else { return nil }
      segment = segments[index + 1]
      offset = Self.segmentHeaderSize
      guard offset < segment.end else { return nil }
    }
    let length = Int(UInt32(littleEndian: segment.file.base.load(fromByteOffset: offset, as: UInt32.self)))
    let size = Self.recordSize(length)
    return (size, OutboxPosition(segment: segment.sequence, offset: offset + size))
  }

  func dropOldestRecord() {
    guard let record = recordSize(at: cursor) else { return }
    cursor = record.next
    queuedRecords -= 1
    queuedBytes -= record.size
    countEviction(record)
    removeSegmentsBeforeCursor()
    cursorFile.write(cursor)
  }

  func addSegment() throws {
    // Keep the files within the byte bound: the oldest segment goes, with its waiting records.
    while (segments.count + 1) * configuration.segmentBytes > configuration.maximumBytes, let oldest = segments.first {
      let next = OutboxPosition(segment: oldest.sequence + 1, offset: 0)
      while cursor < next, let record = recordSize(at: cursor), record.next.segment == oldest.sequence {
        cursor = record.next
        queuedRecords -= 1
        queuedBytes -= record.size
        countEviction(record)
      }
      cursor = max(cursor, next)
      removeSegmentsBeforeCursor(includingLast: true)
      cursorFile.write(cursor)
    }
    let sequence = (segments.last?.sequence ?? cursor.segment) + 1
    let (file, _) = try MappedFile.open(segmentURL(sequence), size: configuration.segmentBytes)
    file.base.storeBytes(of: Self.magic.littleEndian, toByteOffset: 0, as: UInt32.self)
    file.base.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
    segments.append(Segment(sequence: sequence, file: file, end: Self.segmentHeaderSize))
  }

  /// Deletes the files of segments wholly before the cursor (never the one being written unless asked).
  func removeSegmentsBeforeCursor(includingLast: Bool = false) {
    while let first = segments.first, segments.count > (includingLast ? 0 : 1) {
      let fullyRead =
        first.sequence < cursor.segment
        || (first.sequence == cursor.segment && cursor.offset >= first.end && segments.count > 1)
      guard fullyRead else { break }
      segments.removeFirst()
      try? FileManager.default.removeItem(at: first.file.url)
    }
  }
}
