import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One process's journal file: a ring of records in a memory-mapped file that `track` appends to
/// under the queue's lock and the worker reads and commits.
///
/// Layout: a 128-byte header (magic, version, `head`, `tail`, the session), then records of a
/// 4-byte length word and a body. `head` is stored after a record's bytes, so a process killed
/// while writing leaves the record invisible (and `track` had not returned). Records are named by
/// sequence numbers (the queue's marks), never by offsets, so the ring may wrap and drop without
/// invalidating a mark.
///
/// The journal is the tracker's buffer: while the worker keeps up, events also wait in memory and
/// the journal only protects them; when it falls behind (a full outbox pushes back), events wait
/// in the journal alone (*spilled*, flagged in their length word) and the worker reads them back.
/// The file grows up to ``TrackerJournal/maximumBytes`` (the disk budget); at that size it wraps,
/// and only when it is full are the oldest records dropped to make room: those no one had read yet
/// are lost and counted (``DropReason/diskBudget``).
///
/// The file is named for the process run (`journal-<uuid>.ctj`) and held with an exclusive `flock`
/// while the run lasts; at start a tracker adopts every journal in the directory nobody holds (its
/// process died): copies their uncommitted records into its own, then deletes them.
///
/// Not thread-safe: ``EventQueue`` calls it with its lock held.
final class JournalFile {
  let url: URL
  private(set) var file: MappedFile
  private var lock: FileLock?
  private let maximumBytes: Int
  /// Offsets of the oldest live record and of where the next one goes; equal when empty.
  private var tail: Int
  private var head: Int
  /// The sequence numbers of the record at `tail` and of the next record appended.
  private(set) var tailSequence: UInt64 = 0
  private(set) var headSequence: UInt64 = 0
  /// Records below this were left by dead runs: they wait in the journal alone until read.
  private var replayEnd: UInt64 = 0
  /// Where the worker last read: every record below `readSequence` has been read or was in memory.
  private var readSequence: UInt64 = 0
  private var readOffset: Int
  /// Events dropped for the disk budget before the worker read them, not yet taken by the queue.
  private var lostEvents = 0
  /// Drops counted by service and reason in the header, kept across kills until reported.
  private(set) var ledger: DropLedger

  /// What opening found: the records to replay (a range of sequence numbers), how many of them are
  /// events, and the session the last run was in.
  struct Recovered {
    var replay: Range<UInt64> = 0..<0
    var events = 0
    var session: SessionState?
    var damagedRecords = 0
  }

  /// Creates this run's journal in `directory` and adopts the ones dead runs left there.
  static func open(_ configuration: TrackerJournal) throws -> (JournalFile, Recovered) {
    let directory = configuration.directory
    do {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    } catch {
      let posix = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
      throw FileError.io("create \(directory.path)", posix.map { Int32($0.code) } ?? EIO)
    }
    // Made under a name orphan scans skip, locked and given its header, then renamed into place:
    // no other process can take a half-made journal for a dead run's.
    let name = "journal-\(UUID().uuidString.lowercased()).ctj"
    let making = directory.appendingPathComponent(".making-" + name)
    let url = directory.appendingPathComponent(name)
    guard let lock = try FileLock.acquire(making, creating: true) else {
      throw FileError.io("lock \(making.lastPathComponent)", EWOULDBLOCK)
    }
    let (file, _) = try MappedFile.open(making, size: configuration.initialBytes)
    let journal = JournalFile(url: url, file: file, lock: lock, maximumBytes: configuration.maximumBytes)
    guard rename(making.path, url.path) == 0 else { throw FileError.io("rename \(making.lastPathComponent)", errno) }
    var recovered = Recovered()
    for orphan in orphans(in: directory, besides: url) {
      journal.adopt(orphan, into: &recovered)
    }
    journal.replayEnd = journal.headSequence
    recovered.replay = 0..<journal.headSequence
    recovered.events = journal.countEvents()
    // The session goes on in this run's file at once: a run killed before its first commit must not
    // take the session down with the journal it adopted.
    journal.store(recovered.session)
    return (journal, recovered)
  }

  private init(url: URL, file: MappedFile, lock: FileLock, maximumBytes: Int) {
    self.url = url
    self.file = file
    self.lock = lock
    self.maximumBytes = max(maximumBytes, file.size)
    head = JournalFormat.headerBytes
    tail = head
    readOffset = head
    ledger = DropLedger(base: file.base, fresh: true)
    file.base.storeBytes(
      of: JournalFormat.magic.littleEndian, toByteOffset: JournalFormat.Header.magic, as: UInt32.self)
    file.base.storeBytes(
      of: JournalFormat.version.littleEndian, toByteOffset: JournalFormat.Header.version, as: UInt32.self)
    storePositions()
  }

  /// The run's id, from the file's name (`journal-<uuid>.ctj`): drop reports are named after it.
  var runID: String {
    String(url.deletingPathExtension().lastPathComponent.dropFirst("journal-".count))
  }

  /// Lets another tracker adopt the file (the worker has ended: nothing more is written). The file
  /// stays for the next run even when empty: it carries the session.
  func release() { lock = nil }

  var isEmpty: Bool { tail == head }

  // MARK: Writing

  /// Appends one record written by `encode`; grows the file, wraps, or drops the oldest records
  /// when it is full. Returns the record's sequence number, or `nil` when it is not in the journal
  /// (larger than the whole budget, the file cannot grow, or the value cannot be journaled).
  ///
  /// - Parameter spilled: the record waits in the journal alone (the queue keeps no copy).
  func append(spilled: Bool = false, _ encode: (inout JournalWriter) -> Void) -> UInt64? {
    while true {
      var writer = JournalWriter(base: file.base, offset: head + JournalFormat.lengthBytes, limit: writeLimit)
      encode(&writer)
      switch writer.outcome {
      case .written:
        let length = UInt32(writer.offset - head - JournalFormat.lengthBytes)
        let word = spilled ? length | JournalFormat.spilledFlag : length
        file.base.storeBytes(of: word.littleEndian, toByteOffset: head, as: UInt32.self)
        head = writer.offset
        headSequence += 1
        storePositions()
        return headSequence - 1
      case .unencodable:
        return nil
      case .full:
        guard makeRoom() else { return nil }
      }
    }
  }

  /// Raw record bodies copied from an adopted journal.
  private func appendRaw(_ body: UnsafeRawBufferPointer) -> Bool {
    append { writer in writer.raw(body) } != nil
  }

  /// The end of the free space after `head`, keeping one byte between head and tail when wrapped.
  private var writeLimit: Int {
    head < tail ? tail - 1 : file.size
  }

  /// Frees space for a record that did not fit: returns `false` when nothing more can be done.
  private func makeRoom() -> Bool {
    if isEmpty {
      guard head == JournalFormat.headerBytes else {
        resetToStart()
        return true
      }
      return grow()
    }
    if head > tail {
      if grow() { return true }
      if tail > JournalFormat.headerBytes {
        wrap()
        return true
      }
    }
    dropOldest()
    return true
  }

  private func grow() -> Bool {
    guard file.size < maximumBytes else { return false }
    let size = min(maximumBytes, file.size * 2)
    guard let (bigger, _) = try? MappedFile.open(url, size: size) else { return false }
    file = bigger
    ledger.rebase(bigger.base)
    return true
  }

  /// Continues at the first record's place: marks the rest of the file as skipped.
  private func wrap() {
    if head + JournalFormat.lengthBytes <= file.size {
      file.base.storeBytes(of: JournalFormat.wrapMarker.littleEndian, toByteOffset: head, as: UInt32.self)
    }
    head = JournalFormat.headerBytes
    storePositions()
  }

  /// Drops the oldest record to make room; counts it when it was an event no one had read.
  private func dropOldest() {
    let record = JournalRing.record(in: file.base, size: file.size, at: tail)
    let unread = tailSequence >= readSequence && (record.spilled || tailSequence < replayEnd)
    if unread, record.length > 0, file.base.load(fromByteOffset: record.body, as: UInt8.self) == 1 {
      lostEvents += 1
      // Counted on disk with the drop itself: the record of it survives what the event did not.
      ledger.add(service: "", reason: DropReason.diskBudget.rawValue, count: 1)
    }
    advanceTail(to: record.next)
    storePositions()
  }

  private func advanceTail(to next: Int) {
    tail = next
    tailSequence += 1
    if readSequence < tailSequence {
      readSequence = tailSequence
      readOffset = tail
    }
    if tail == head { resetToStart() }
  }

  private func resetToStart() {
    head = JournalFormat.headerBytes
    tail = head
    readSequence = headSequence
    readOffset = head
    storePositions()
  }

  /// Events dropped for the disk budget since the last call.
  func takeLostEvents() -> Int {
    defer { lostEvents = 0 }
    return lostEvents
  }

  // MARK: Reading and committing

  /// Copies the bodies of up to `maximum` records from `start` (or the oldest one left) below
  /// `end`; returns them and the sequence number after the last.
  func read(from start: UInt64, below end: UInt64, maximum: Int) -> (bodies: [[UInt8]], next: UInt64) {
    var sequence = max(start, tailSequence)
    guard sequence < min(end, headSequence) else { return ([], max(sequence, min(end, headSequence))) }
    var offset = readSequence <= sequence && readSequence >= tailSequence ? readOffset : tail
    var at = readSequence <= sequence && readSequence >= tailSequence ? readSequence : tailSequence
    while at < sequence {
      offset = JournalRing.record(in: file.base, size: file.size, at: offset).next
      at += 1
    }
    var bodies: [[UInt8]] = []
    while sequence < min(end, headSequence), bodies.count < maximum {
      let record = JournalRing.record(in: file.base, size: file.size, at: offset)
      bodies.append(Array(UnsafeRawBufferPointer(start: file.base + record.body, count: record.length)))
      offset = record.next
      sequence += 1
    }
    readSequence = sequence
    readOffset = offset
    return (bodies, sequence)
  }

  /// Everything below `sequence` reached the services; `session` is the worker's session after it.
  func commit(upTo sequence: UInt64, session: SessionState?) {
    while tailSequence < min(sequence, headSequence) {
      advanceTail(to: JournalRing.record(in: file.base, size: file.size, at: tail).next)
    }
    store(session)
    storePositions()
  }

  /// How many of the records waiting are events (read at start, to count the replay).
  private func countEvents() -> Int {
    var count = 0
    var offset = tail
    while offset != head {
      let record = JournalRing.record(in: file.base, size: file.size, at: offset)
      if record.length > 0, file.base.load(fromByteOffset: record.body, as: UInt8.self) == 1 { count += 1 }
      offset = record.next
    }
    return count
  }

  /// Copies the records of a dead run's file, from `tail` to `head`, into this one.
  func copyRecords(of base: UnsafeMutableRawPointer, size: Int, first: Int, tail: Int, head: Int) -> Bool {
    var offset = tail
    while offset != head {
      let record = JournalRing.record(in: base, size: size, first: first, at: offset)
      guard appendRaw(UnsafeRawBufferPointer(start: base + record.body, count: record.length)) else { return false }
      offset = record.next
    }
    return true
  }

  /// Bytes free for records before the disk budget is reached.
  var freeBytes: Int {
    let used = head >= tail ? head - tail : file.size - tail + head - JournalFormat.headerBytes
    return maximumBytes - JournalFormat.headerBytes - used
  }

  private func storePositions() {
    file.base.storeBytes(
      of: UInt64(tail).littleEndian, toByteOffset: JournalFormat.Header.committed, as: UInt64.self)
    file.base.storeBytes(of: UInt64(head).littleEndian, toByteOffset: JournalFormat.Header.head, as: UInt64.self)
  }
}
