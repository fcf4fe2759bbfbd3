import Foundation

/// The worker's session as the journal keeps it, so a run that follows a crash (or any restart
/// within the session timeout) continues the session instead of starting another.
struct SessionState: Equatable {
  var session: TrackingSession
  var lastActivity: Date
  var eventCount: Int
}

extension JournalFile {
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

  /// Keeps the worker's session in the header (read back by the next run).
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

/// Walking the records of a journal's ring: a length word (all ones marks the rest of the file as
/// skipped), then the body.
enum JournalRing {
  struct Record {
    /// The body's offset and length.
    let body: Int
    let length: Int
    /// Where the next record starts (before following a wrap).
    let next: Int
  }

  /// Where the record at `offset` really starts: the first record's place after a wrap marker, or
  /// when too few bytes are left for a length word.
  static func start(
    in base: UnsafeMutableRawPointer, size: Int, first: Int = JournalFormat.headerBytes, at offset: Int
  ) -> Int {
    if offset + JournalFormat.lengthBytes > size { return first }
    let word = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    return word == JournalFormat.wrapMarker ? first : offset
  }

  /// The record at `offset` in a file this process wrote (trusted).
  static func record(
    in base: UnsafeMutableRawPointer, size: Int, first: Int = JournalFormat.headerBytes, at offset: Int
  ) -> Record {
    let at = start(in: base, size: size, first: first, at: offset)
    let word = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self))
    let length = Int(word)
    let body = at + JournalFormat.lengthBytes
    return Record(body: body, length: length, next: body + length)
  }

  /// Where the record after `record` starts, a wrap followed (so that a walk compares it with `head`
  /// and never reads past the newest record into the space after it).
  static func after(_ record: Record, in base: UnsafeMutableRawPointer, size: Int, first: Int, head: Int) -> Int {
    record.next == head ? head : start(in: base, size: size, first: first, at: record.next)
  }

  /// Checks the framing of a file another run wrote, from `tail` to `head`: returns where the
  /// sound records end (`head` when all are) and their bytes, or `nil` when the positions are not sane.
  static func validate(
    _ base: UnsafeMutableRawPointer, size: Int, first: Int, tail: Int, head: Int
  ) -> (end: Int, bytes: Int)? {
    guard first <= tail, tail <= size, first <= head, head <= size else { return nil }
    var offset = tail
    var bytes = 0
    var wrapped = false
    while offset != head {
      let at = start(in: base, size: size, first: first, at: offset)
      if at == head { return (head, bytes) }  // wrapped, and nothing written since
      if at != offset {
        guard !wrapped, head < tail else { return (offset, bytes) }
        wrapped = true
      }
      let limit = wrapped || head >= tail ? head : size
      guard at + JournalFormat.lengthBytes <= limit else { return (offset, bytes) }
      let word = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self))
      let length = Int(word)
      guard length <= limit - at - JournalFormat.lengthBytes else { return (offset, bytes) }
      bytes += JournalFormat.lengthBytes + length
      offset = at + JournalFormat.lengthBytes + length
    }
    return (head, bytes)
  }
}
