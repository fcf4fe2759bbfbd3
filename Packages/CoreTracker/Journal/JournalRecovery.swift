import Foundation

/// The worker's session as the journal keeps it, so a run that follows a crash (or any restart
/// within the session timeout) continues the session instead of starting another.
struct SessionState: Equatable {
  var session: TrackingSession
  var lastActivity: Date
  var eventCount: Int
}

extension JournalFile {
  /// The journals in `directory` besides `own`, oldest session first.
  static func orphans(in directory: URL, besides own: URL) -> [URL] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { $0.hasPrefix("journal-") && $0.hasSuffix(".ctj") }.sorted()
      .map { directory.appendingPathComponent($0) }.filter { $0.lastPathComponent != own.lastPathComponent }
  }

  /// Copies the uncommitted records of a dead run's journal into this one, keeps its session if it
  /// is the latest seen, then empties and deletes it. A journal another process holds is left alone.
  func adopt(_ orphan: URL, into recovered: inout Recovered) {
    guard let lock = (try? FileLock.acquire(orphan, creating: false)) ?? nil else { return }
    let size = lock.size
    guard size >= JournalFormat.headerBytes, let (mapped, _) = try? MappedFile.open(orphan, size: size) else {
      try? FileManager.default.removeItem(at: orphan)
      return
    }
    let base = mapped.base
    typealias H = JournalFormat.Header
    guard UInt32(littleEndian: base.loadUnaligned(fromByteOffset: H.magic, as: UInt32.self)) == JournalFormat.magic,
      UInt32(littleEndian: base.loadUnaligned(fromByteOffset: H.version, as: UInt32.self)) == JournalFormat.version
    else {
      recovered.damagedRecords += 1
      try? FileManager.default.removeItem(at: orphan)
      return
    }
    let head = Int(clamping: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: H.head, as: UInt64.self)))
    let committed = Int(
      clamping: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: H.committed, as: UInt64.self)))
    if JournalFormat.headerBytes <= committed, committed <= head, head <= size {
      if !appendRaw(UnsafeRawBufferPointer(start: base + committed, count: head - committed)) {
        return  // no room: left for a later run, nothing lost
      }
    } else {
      recovered.damagedRecords += 1
    }
    if let session = Self.session(in: base), session.lastActivity >= (recovered.session?.lastActivity ?? .distantPast) {
      recovered.session = session
    }
    // Emptied before it is deleted: a process that opened it before the unlink finds nothing.
    base.storeBytes(of: UInt64(head).littleEndian, toByteOffset: H.committed, as: UInt64.self)
    try? FileManager.default.removeItem(at: orphan)
  }

  /// The session a journal's header holds, if any and if it is sane.
  static func session(in base: UnsafeMutableRawPointer) -> SessionState? {
    typealias H = JournalFormat.Header
    func u64(_ offset: Int) -> UInt64 {
      UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    guard u64(H.hasSession) == 1 else { return nil }
    let started = Double(bitPattern: u64(H.sessionStart))
    let last = Double(bitPattern: u64(H.lastActivity))
    let number = Int64(bitPattern: u64(H.sessionNumber))
    let count = Int64(bitPattern: u64(H.sessionEvents))
    guard started.isFinite, last.isFinite, number > 0, count >= 0 else { return nil }
    let session = TrackingSession(
      id: Int64(bitPattern: u64(H.sessionID)), startedAt: Date(timeIntervalSince1970: started), number: Int(number))
    return SessionState(session: session, lastActivity: Date(timeIntervalSince1970: last), eventCount: Int(count))
  }

  /// Decodes the records between `committed` and `head` (this run's, adopted ones included).
  func decodePending(into recovered: inout Recovered) {
    let bytes = UnsafeRawBufferPointer(
      start: file.base + JournalFormat.headerBytes, count: head - JournalFormat.headerBytes)
    var reader = JournalReader(bytes)
    while !reader.isAtEnd {
      guard let length = try? reader.u32(), let body = try? reader.bytes(Int(length)) else {
        recovered.damagedRecords += 1
        break
      }
      var record = JournalReader(body)
      if let command = try? record.command(), record.isAtEnd {
        recovered.commands.append(command)
      } else {
        recovered.damagedRecords += 1
      }
    }
  }
}
