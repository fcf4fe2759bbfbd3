import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A dead run's journal taken for adoption: locked, mapped and checked. It stays locked until the
/// adopting run's journal is in place, then it is emptied and deleted.
struct DeadJournal {
  let url: URL
  let lock: FileLock
  let file: MappedFile
  let version: UInt32

  private typealias H = JournalFormat.Header

  /// The run that took its records, if one did (``JournalFormat/Header/absorbedBy``).
  var absorbedBy: UUID? {
    guard version > 1 else { return nil }
    let id = UUID(uuid: file.base.loadUnaligned(fromByteOffset: H.absorbedBy, as: uuid_t.self))
    return id == UUID(uuid: UUID.zero) ? nil : id
  }

  /// When its run began (zero in files written before this was kept).
  var created: Double {
    guard version > 1 else { return 0 }
    let value = Double(
      bitPattern: UInt64(littleEndian: file.base.loadUnaligned(fromByteOffset: H.created, as: UInt64.self)))
    return value.isFinite ? value : 0
  }

  /// Marks the file as taken by `run`, before a record is copied.
  func markAbsorbed(by run: UUID) {
    guard version > 1 else { return }
    file.base.storeBytes(of: run.uuid, toByteOffset: H.absorbedBy, as: uuid_t.self)
  }

  /// Empties the file, then deletes it: a process that opened it before the unlink finds nothing.
  func discard() {
    let head = file.base.loadUnaligned(fromByteOffset: H.head, as: UInt64.self)
    file.base.storeBytes(of: head, toByteOffset: H.committed, as: UInt64.self)
    try? FileManager.default.removeItem(at: url)
  }
}

extension UUID {
  /// All zeros: no run.
  fileprivate static let zero: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

/// Opening a run's journal and adopting what dead runs left.
///
/// The new journal is made under a `.making-` name that adoption skips, takes every dead run's
/// journal (oldest first) within the one disk budget, and only then is renamed into place; the
/// journals it took are deleted after that. Each taken journal is first marked with the new run's id
/// (``JournalFormat/Header/absorbedBy``), so a kill at any moment leaves each record in exactly one
/// place for the next run: before the rename the new journal is an abandoned `.making-` file (removed
/// by a later run) and the marks name a run whose journal does not exist (ignored); after it, the
/// marks name a journal that holds the records, and the marked files are deleted unread.
extension JournalFile {
  /// Creates this run's journal in `directory` and adopts the ones dead runs left there.
  static func open(_ configuration: TrackerJournal) throws -> (JournalFile, Recovered) {
    let directory = configuration.directory
    do {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    } catch {
      let posix = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
      throw FileError.io("create \(directory.path)", posix.map { Int32($0.code) } ?? EIO)
    }
    let run = UUID()
    let name = "journal-\(run.uuidString.lowercased()).ctj"
    let making = directory.appendingPathComponent(".making-" + name)
    guard let lock = try FileLock.acquire(making, creating: true) else {
      throw FileError.io("lock \(making.lastPathComponent)", EWOULDBLOCK)
    }
    let (file, _) = try MappedFile.open(making, size: configuration.initialBytes)
    let journal = JournalFile(
      url: making, run: run, file: file, lock: lock, maximumBytes: configuration.maximumBytes)
    var recovered = Recovered()
    let adopted = journal.adoptDeadRuns(in: directory, into: &recovered)
    recovered.replay = 0..<journal.headSequence
    recovered.events = journal.countEvents()
    journal.store(recovered.session)
    let url = directory.appendingPathComponent(name)
    guard rename(making.path, url.path) == 0 else { throw FileError.io("rename \(making.lastPathComponent)", errno) }
    journal.url = url
    for dead in adopted { dead.discard() }
    return (journal, recovered)
  }

  /// Takes every journal in `directory` nobody holds: deletes those another run already took (its
  /// journal is in place), copies the others' uncommitted records, drop counts and latest session
  /// into this one, oldest first. Returns them, still locked, to be deleted once this one is in place.
  private func adoptDeadRuns(in directory: URL, into recovered: inout Recovered) -> [DeadJournal] {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    Self.removeAbandonedJournals(names.filter { $0.hasPrefix(".making-journal-") }, in: directory)
    var taken: [DeadJournal] = []
    for name in names where name.hasPrefix("journal-") && name.hasSuffix(".ctj") {
      let url = directory.appendingPathComponent(name)
      guard let dead = Self.take(url, damaged: &recovered.damagedRecords) else { continue }
      if let absorber = dead.absorbedBy, absorber != run,
        FileManager.default.fileExists(atPath: Self.url(of: absorber, in: directory).path)
      {
        dead.discard()  // its records are in that run's journal
        continue
      }
      taken.append(dead)
    }
    taken.sort { ($0.created, $0.url.lastPathComponent) < ($1.created, $1.url.lastPathComponent) }
    for dead in taken { absorb(dead, into: &recovered) }
    return taken
  }

  /// Copies a dead run's uncommitted records into this journal. Past the disk budget the oldest
  /// records make room (each event counted as ``DropReason/diskBudget``), never the ones its worker
  /// held (they may have reached a service); a record that finds no room is dropped and counted.
  private func absorb(_ dead: DeadJournal, into recovered: inout Recovered) {
    dead.markAbsorbed(by: run)
    let base = dead.file.base
    let size = dead.file.size
    typealias H = JournalFormat.Header
    let head = Int(clamping: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: H.head, as: UInt64.self)))
    let tail = Int(clamping: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: H.committed, as: UInt64.self)))
    let first = JournalFormat.headerBytes(version: dead.version)
    if let (end, _) = JournalRing.validate(base, size: size, first: first, tail: tail, head: head) {
      let held = dead.version > 1 ? Self.heldByWorker(in: base) : 0
      copyRecords(of: base, size: size, first: first, tail: tail, head: end, held: held)
      if end != head { recovered.damagedRecords += 1 }
    } else {
      recovered.damagedRecords += 1
    }
    if let session = Self.session(in: base), session.lastActivity >= (recovered.session?.lastActivity ?? .distantPast) {
      recovered.session = session
    }
    if dead.version > 1 { ledger.adopt(DropLedger(base: base)) }
  }

  /// Copies the records from `tail` to `head`; the first `held` are protected as soon as copied.
  private func copyRecords(of base: UnsafeMutableRawPointer, size: Int, first: Int, tail: Int, head: Int, held: UInt64)
  {
    var offset = tail
    var index: UInt64 = 0
    while offset != head {
      let record = JournalRing.record(in: base, size: size, first: first, at: offset)
      if appendRaw(UnsafeRawBufferPointer(start: base + record.body, count: record.length)) {
        if index < held {
          handedByDeadRuns = headSequence
          protectedEnd = headSequence
        }
      } else if record.length > 0, base.load(fromByteOffset: record.body, as: UInt8.self) == 1 {
        lostEvents += 1
        ledger.add(service: "", reason: DropReason.diskBudget.rawValue, count: 1)
      }
      index += 1
      offset = JournalRing.after(record, in: base, size: size, first: first, head: head)
    }
  }

  /// How many of a dead run's uncommitted records its worker held when it died.
  private static func heldByWorker(in base: UnsafeMutableRawPointer) -> UInt64 {
    typealias H = JournalFormat.Header
    let tail = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: H.tailSequence, as: UInt64.self))
    let protected = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: H.protectedEnd, as: UInt64.self))
    return protected > tail ? protected - tail : 0
  }

  /// Locks, maps and checks a journal; `nil` when another process holds it. A damaged one is
  /// counted and deleted.
  private static func take(_ url: URL, damaged: inout Int) -> DeadJournal? {
    guard let lock = (try? FileLock.acquire(url, creating: false)) ?? nil else { return nil }
    let size = lock.size
    guard size >= JournalFormat.headerBytes(version: 1), let (mapped, _) = try? MappedFile.open(url, size: size) else {
      if size > 0 { damaged += 1 }
      try? FileManager.default.removeItem(at: url)
      return nil
    }
    guard let version = Self.version(of: mapped), JournalFormat.headerBytes(version: version) <= size else {
      damaged += 1
      try? FileManager.default.removeItem(at: url)
      return nil
    }
    return DeadJournal(url: url, lock: lock, file: mapped, version: version)
  }

  /// The format version of a mapped journal, `nil` when it is not a journal this code reads.
  private static func version(of file: MappedFile) -> UInt32? {
    typealias H = JournalFormat.Header
    let magic = UInt32(littleEndian: file.base.loadUnaligned(fromByteOffset: H.magic, as: UInt32.self))
    let version = UInt32(littleEndian: file.base.loadUnaligned(fromByteOffset: H.version, as: UInt32.self))
    return magic == JournalFormat.magic && JournalFormat.readableVersions.contains(version) ? version : nil
  }

  /// Deletes `.making-` journals whose run died before putting them in place (nobody holds them and
  /// their header was written: their run had taken the lock). Their records are still in the
  /// journals they were copied from.
  private static func removeAbandonedJournals(_ names: [String], in directory: URL) {
    for name in names {
      let url = directory.appendingPathComponent(name)
      guard let lock = (try? FileLock.acquire(url, creating: false)) ?? nil,
        lock.size >= JournalFormat.headerBytes(version: 1),
        let (mapped, _) = try? MappedFile.open(url, size: JournalFormat.headerBytes(version: 1)),
        version(of: mapped) != nil
      else { continue }
      try? FileManager.default.removeItem(at: url)
    }
  }

  /// Where the journal of `run` is once in place.
  private static func url(of run: UUID, in directory: URL) -> URL {
    directory.appendingPathComponent("journal-\(run.uuidString.lowercased()).ctj")
  }
}
