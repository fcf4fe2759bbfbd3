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
/// in the journal alone and the worker reads them back. The file grows up to
/// ``TrackerJournal/maximumBytes`` (the disk budget); at that size it wraps, and when it is full the
/// oldest records make room: each event dropped is counted (``DropReason/diskBudget``, in the
/// ledger with the drop). Records the worker holds (``protectedEnd``) are never dropped; if only
/// those are left, the new event is the one dropped (and counted).
///
/// The file is named for the process run (`journal-<uuid>.ctj`) and held with an exclusive `flock`
/// while the run lasts; at start a tracker adopts every journal in the directory nobody holds (its
/// process died): copies their uncommitted records into its own, within the one disk budget, then
/// deletes them (`JournalAdoption.swift`).
///
/// Not thread-safe: ``EventQueue`` calls it with its lock held.
final class JournalFile {
  /// Where the file is: its `.making-` name while it adopts dead runs' journals, then its own.
  var url: URL
  /// The run that writes it.
  let run: UUID
  private(set) var file: MappedFile
  private var lock: FileLock?
  private let maximumBytes: Int
  /// Offsets of the oldest live record and of where the next one goes; equal when empty.
  private var tail: Int
  private var head: Int
  /// The sequence numbers of the record at `tail` and of the next record appended.
  private(set) var tailSequence: UInt64 = 0
  private(set) var headSequence: UInt64 = 0
  /// Records below this are in the worker's hands (taken in memory, or read back): never dropped.
  /// Kept in the header, so that the next run knows which of the records a killed run left may
  /// already have reached a service: it never drops those for the disk budget either (a copy is in
  /// an outbox, or it is delivered again under its id: counting it as lost would over-count).
  var protectedEnd: UInt64 {
    get { protectedSequence }
    set {
      protectedSequence = max(newValue, handedByDeadRuns)
      file.base.storeBytes(
        of: protectedSequence.littleEndian, toByteOffset: JournalFormat.Header.protectedEnd, as: UInt64.self)
    }
  }
  private var protectedSequence: UInt64 = 0
  /// The end of the adopted records a dead run may have handed to a service (see ``protectedEnd``).
  var handedByDeadRuns: UInt64 = 0
  /// Called once before the first record an append drops: the queue makes what waits in memory
  /// wait in the journal alone, so that a dropped record is a dropped event (counted), never one
  /// that a copy in memory would still deliver.
  var beforeDropping: (() -> Void)?
  /// The worker's reading place: a sequence number and the offset of its record.
  private var readSequence: UInt64 = 0
  private var readOffset: Int
  /// Events dropped for the disk budget, not yet taken by the queue.
  var lostEvents = 0
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

  /// A journal under `url` (its `.making-` name until ``JournalFile/open(_:)`` puts it in place).
  init(url: URL, run: UUID, file: MappedFile, lock: FileLock, maximumBytes: Int) {
    self.url = url
    self.run = run
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
    file.base.storeBytes(
      of: Date().timeIntervalSince1970.bitPattern.littleEndian, toByteOffset: JournalFormat.Header.created,
      as: UInt64.self)
    storePositions()
  }

  /// The run's id, in the file's name (`journal-<uuid>.ctj`): drop reports are named after it.
  var runID: String { run.uuidString.lowercased() }

  /// Lets another tracker adopt the file (the worker has ended: nothing more is written). The file
  /// stays for the next run even when empty: it carries the session.
  func release() { lock = nil }

  var isEmpty: Bool { tail == head }

  // MARK: Writing

  /// What became of a record given to ``append(_:)``.
  enum Appended {
    /// In the journal, under this sequence number.
    case journaled(UInt64)
    /// Not journaled: larger than the whole budget, the file could not grow, or the value cannot be
    /// journaled. The event goes on without the journal's protection.
    case notJournaled
    /// The journal is full of records the worker holds: the event is dropped (and counted).
    case overBudget
  }

  /// Appends one record written by `encode`; grows the file, wraps, or drops the oldest records
  /// when it is full.
  func append(_ encode: (inout JournalWriter) -> Void) -> Appended {
    var warned = false
    while true {
      var writer = JournalWriter(base: file.base, offset: head + JournalFormat.lengthBytes, limit: writeLimit)
      encode(&writer)
      switch writer.outcome {
      case .written:
        let length = UInt32(writer.offset - head - JournalFormat.lengthBytes)
        file.base.storeBytes(of: length.littleEndian, toByteOffset: head, as: UInt32.self)
        head = writer.offset
        headSequence += 1
        storePositions()
        return .journaled(headSequence - 1)
      case .unencodable:
        return .notJournaled
      case .full:
        // A record larger than the whole budget never fits: nothing is dropped for it.
        guard JournalFormat.lengthBytes + writer.wanted < maximumBytes - JournalFormat.headerBytes else {
          return .notJournaled
        }
        switch makeRoom(warned: &warned) {
        case .made: continue
        case .tooLarge: return .notJournaled
        case .protected:
          ledger.add(service: "", reason: DropReason.diskBudget.rawValue, count: 1)
          return .overBudget
        }
      }
    }
  }

  /// Raw record bodies copied from an adopted journal.
  func appendRaw(_ body: UnsafeRawBufferPointer) -> Bool {
    if case .journaled = append({ writer in writer.raw(body) }) { return true }
    return false
  }

  /// The end of the free space after `head`, keeping one byte between head and tail when wrapped.
  private var writeLimit: Int {
    head < tail ? tail - 1 : file.size
  }

  private enum Room {
    case made, tooLarge, protected
  }

  /// Frees space for a record that did not fit.
  private func makeRoom(warned: inout Bool) -> Room {
    if isEmpty {
      guard head == JournalFormat.headerBytes else {
        resetToStart()
        return .made
      }
      return grow() ? .made : .tooLarge
    }
    if head > tail {
      if grow() { return .made }
      if tail > JournalFormat.headerBytes {
        wrap()
        return .made
      }
    }
    guard tailSequence >= protectedEnd else { return .protected }
    if !warned {
      warned = true
      beforeDropping?()
    }
    dropOldest()
    return .made
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

  /// Drops the oldest record to make room and counts it when it is an event.
  private func dropOldest() {
    let record = JournalRing.record(in: file.base, size: file.size, at: tail)
    if record.length > 0, file.base.load(fromByteOffset: record.body, as: UInt8.self) == 1 {
      lostEvents += 1
      // Counted on disk with the drop itself: the record of it survives what the event did not.
      ledger.add(service: "", reason: DropReason.diskBudget.rawValue, count: 1)
    }
    advanceTail(to: after(record))
    storePositions()
  }

  /// Where the record after `record` starts: past a wrap marker (or the file's end) to the first
  /// record's place, unless `record` was the newest (then `head`).
  private func after(_ record: JournalRing.Record) -> Int {
    JournalRing.after(record, in: file.base, size: file.size, first: JournalFormat.headerBytes, head: head)
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
      offset = after(JournalRing.record(in: file.base, size: file.size, at: offset))
      at += 1
    }
    var bodies: [[UInt8]] = []
    while sequence < min(end, headSequence), bodies.count < maximum {
      let record = JournalRing.record(in: file.base, size: file.size, at: offset)
      bodies.append(Array(UnsafeRawBufferPointer(start: file.base + record.body, count: record.length)))
      offset = after(record)
      sequence += 1
    }
    readSequence = sequence
    readOffset = offset
    return (bodies, sequence)
  }

  /// Everything below `sequence` reached the services; `session` is the worker's session after it.
  func commit(upTo sequence: UInt64, session: SessionState?) {
    while tailSequence < min(sequence, headSequence) {
      advanceTail(to: after(JournalRing.record(in: file.base, size: file.size, at: tail)))
    }
    store(session)
    storePositions()
  }

  /// How many of the records waiting are events (read at start, to count the replay).
  func countEvents() -> Int {
    var count = 0
    var offset = tail
    while offset != head {
      let record = JournalRing.record(in: file.base, size: file.size, at: offset)
      if record.length > 0, file.base.load(fromByteOffset: record.body, as: UInt8.self) == 1 { count += 1 }
      offset = after(record)
    }
    return count
  }

  /// The tail's offset goes first, its sequence number after: a kill between the two can only make
  /// the next run take one more record for handed over (kept, never dropped), not one fewer.
  private func storePositions() {
    typealias H = JournalFormat.Header
    file.base.storeBytes(of: UInt64(tail).littleEndian, toByteOffset: H.committed, as: UInt64.self)
    file.base.storeBytes(of: tailSequence.littleEndian, toByteOffset: H.tailSequence, as: UInt64.self)
    file.base.storeBytes(of: UInt64(head).littleEndian, toByteOffset: H.head, as: UInt64.self)
  }
}
