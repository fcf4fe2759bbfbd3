import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One process's journal file: a memory-mapped file the queue appends records to under its lock
/// and the worker commits once the services have taken them.
///
/// Layout: a 128-byte header (magic, version, `head`, `committed`, the session), then records of
/// a 4-byte length and a body. `head` is stored after a record's bytes, so a process killed while
/// writing leaves the record invisible (and `track` had not returned). When the worker has caught
/// up (`committed == head`) both go back to the first record, so the file stays small.
///
/// The file is named for the process run (`journal-<uuid>.ctj`) and held with an exclusive `flock`
/// while the run lasts; at start a tracker adopts every journal in the directory nobody holds (its
/// process died): copies their uncommitted records into its own, then deletes them. So several
/// processes may share a directory (an app and its extensions), and each dead run is adopted once.
///
/// Not thread-safe: ``EventQueue`` calls it with its lock held.
final class JournalFile {
  let url: URL
  private(set) var file: MappedFile
  private var lock: FileLock?
  private let maximumBytes: Int
  private(set) var head: Int
  private var committed: Int
  /// How many times `head` went back to the first record (in memory only: marks live in memory).
  private var generation = 0

  /// What opening found: the records to replay and the session the last run was in.
  struct Recovered {
    var commands: [EventQueue.Command] = []
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
    journal.decodePending(into: &recovered)
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
    committed = head
    file.base.storeBytes(
      of: JournalFormat.magic.littleEndian, toByteOffset: JournalFormat.Header.magic, as: UInt32.self)
    file.base.storeBytes(
      of: JournalFormat.version.littleEndian, toByteOffset: JournalFormat.Header.version, as: UInt32.self)
    storePositions()
  }

  /// Lets another tracker adopt the file (the worker has ended: nothing more is written). The file
  /// stays for the next run even when empty: it carries the session.
  func release() { lock = nil }

  // MARK: Writing

  /// Appends one record written by `encode`; grows the file when it is full. Returns whether the
  /// record is in the journal (`false`: the journal is at its maximum size or cannot grow, or the
  /// value cannot be journaled).
  func append(_ encode: (inout JournalWriter) -> Void) -> Bool {
    while true {
      var writer = JournalWriter(base: file.base, offset: head + JournalFormat.lengthBytes, limit: file.size)
      encode(&writer)
      switch writer.outcome {
      case .written:
        let length = writer.offset - head - JournalFormat.lengthBytes
        file.base.storeBytes(of: UInt32(length).littleEndian, toByteOffset: head, as: UInt32.self)
        head = writer.offset
        storePositions()
        return true
      case .unencodable:
        return false
      case .full:
        guard grow() else { return false }
      }
    }
  }

  /// Raw records copied from an adopted journal.
  func appendRaw(_ bytes: UnsafeRawBufferPointer) -> Bool {
    while bytes.count > file.size - head {
      guard grow() else { return false }
    }
    if let source = bytes.baseAddress { (file.base + head).copyMemory(from: source, byteCount: bytes.count) }
    head += bytes.count
    storePositions()
    return true
  }

  private func grow() -> Bool {
    guard file.size < maximumBytes else { return false }
    let size = min(maximumBytes, file.size * 2)
    guard let (bigger, _) = try? MappedFile.open(url, size: size) else { return false }
    file = bigger
    return true
  }

  /// Everything before `end` reached the services; `session` is the worker's session after it.
  ///
  /// A mark from before the file last went back to its start is ignored: everything it named was
  /// committed then.
  func commit(upTo end: Mark, session: SessionState?) {
    guard end.generation == generation else { return }
    committed = max(committed, min(end.offset, head))
    if committed == head {
      head = JournalFormat.headerBytes
      committed = head
      generation &+= 1
    }
    store(session)
    storePositions()
  }

  /// A place in the journal: an offset, and how many times the file had gone back to its start.
  struct Mark {
    let offset: Int
    let generation: Int
  }

  /// Where the next record will go.
  var mark: Mark { Mark(offset: head, generation: generation) }

  private func storePositions() {
    file.base.storeBytes(
      of: UInt64(committed).littleEndian, toByteOffset: JournalFormat.Header.committed, as: UInt64.self)
    file.base.storeBytes(of: UInt64(head).littleEndian, toByteOffset: JournalFormat.Header.head, as: UInt64.self)
  }

  func store(_ session: SessionState?) {
    let base = file.base
    typealias H = JournalFormat.Header
    base.storeBytes(of: UInt64(session == nil ? 0 : 1).littleEndian, toByteOffset: H.hasSession, as: UInt64.self)
    guard let session else { return }
    base.storeBytes(of: UInt64(bitPattern: session.session.id).littleEndian, toByteOffset: H.sessionID, as: UInt64.self)
    base.storeBytes(
      of: UInt64(bitPattern: Int64(session.session.number)).littleEndian, toByteOffset: H.sessionNumber, as: UInt64.self
    )
    base.storeBytes(
      of: session.session.startedAt.timeIntervalSince1970.bitPattern.littleEndian, toByteOffset: H.sessionStart,
      as: UInt64.self)
    base.storeBytes(
      of: session.lastActivity.timeIntervalSince1970.bitPattern.littleEndian, toByteOffset: H.lastActivity,
      as: UInt64.self)
    base.storeBytes(
      of: UInt64(bitPattern: Int64(session.eventCount)).littleEndian, toByteOffset: H.sessionEvents, as: UInt64.self)
  }
}
