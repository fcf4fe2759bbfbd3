import CollectorStore
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The ingest spool's files in one directory: numbered segments (`00000000000000000001.spool`, …)
/// written as ``SpoolCoding`` says, each append followed by `fsync`, and a `lock` file that keeps a
/// second collector out of the directory.
///
/// New records go to the newest segment, which the spool starts at every open; older segments are
/// only read (at open) and deleted once the store holds all of their rows.
final class SpoolSegments {
  let directory: String
  /// The segment appends go to, its descriptor and size.
  private(set) var current: Int
  private var descriptor: Int32
  private(set) var size: Int
  private let headerSize: Int
  private let lock: Int32

  /// A segment's batches found at open.
  struct Recovered {
    var segment: Int
    var batches: [StoreBatch]
  }

  /// Opens (creating it if need be) the spool in `directory` and reads what earlier runs left:
  /// every whole record of every segment, oldest first. Throws when another process holds the
  /// directory or a file in it is not a segment.
  static func open(_ directory: String) throws -> (segments: SpoolSegments, recovered: [Recovered]) {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let lock = systemOpen(directory + "/lock", O_RDWR | O_CREAT, 0o644)
    guard lock >= 0 else { throw SpoolError("cannot open \(directory)/lock: \(String(cString: strerror(errno)))") }
    guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
      close(lock)
      throw SpoolError("the spool \(directory) is in use by another collector (its lock file is held)")
    }
    do {
      var recovered: [Recovered] = []
      let numbers = try segmentNumbers(directory)
      for number in numbers {
        let path = segmentPath(directory, number)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let (layout, start) = try SpoolCoding.header(bytes)
        let batches = SpoolCoding.records(bytes, from: start, layout: layout).batches
        if batches.isEmpty {
          try FileManager.default.removeItem(atPath: path)
        } else {
          recovered.append(Recovered(segment: number, batches: batches))
        }
      }
      let segments = try SpoolSegments(directory: directory, number: (numbers.last ?? 0) + 1, lock: lock)
      return (segments, recovered)
    } catch {
      close(lock)
      throw error
    }
  }

  private init(directory: String, number: Int, lock: Int32) throws {
    self.directory = directory
    self.lock = lock
    let header = SpoolCoding.header()
    headerSize = header.count
    current = number
    descriptor = try Self.create(Self.segmentPath(directory, number), header: header, directory: directory)
    size = header.count
  }

  private var isOpen = true
  /// A failed append may have left part of its record: the next goes to a new segment.
  private var damaged = false

  deinit { release() }

  /// Closes the newest segment and gives the directory up to the next spool.
  func release() {
    guard isOpen else { return }
    isOpen = false
    close(descriptor)
    close(lock)
  }

  /// Appends `record` to the newest segment and returns once it is on disk. A failed append is cut
  /// back off, and the next one goes to a new segment: whatever the failure left in this one, no
  /// record after it shares its file (a segment is read up to its first damaged record).
  func append(_ record: [UInt8]) throws {
    if damaged {
      try rotate()
      damaged = false
    }
    do {
      try Self.write(record, to: descriptor, path: Self.segmentPath(directory, current))
      guard fsync(descriptor) == 0 else { throw SpoolError("fsync of the spool failed: \(Self.reason())") }
    } catch {
      _ = ftruncate(descriptor, off_t(size))
      damaged = true
      throw error
    }
    size += record.count
  }

  /// Starts segment `current + 1` for the next appends; the one before stays until ``remove(_:)``.
  func rotate() throws {
    let next = try Self.create(
      Self.segmentPath(directory, current + 1), header: SpoolCoding.header(), directory: directory)
    close(descriptor)
    descriptor = next
    current += 1
    size = headerSize
  }

  /// Empties the newest segment (the store holds all of its rows). Not synced: were it lost, the
  /// records read again at the next open are rows the store skips as stored.
  func truncateCurrent() {
    guard size > headerSize, ftruncate(descriptor, off_t(headerSize)) == 0 else { return }
    lseek(descriptor, off_t(headerSize), SEEK_SET)
    size = headerSize
  }

  /// Deletes the segments numbered below `number` (never the newest).
  func remove(below number: Int) {
    for segment in (try? Self.segmentNumbers(directory)) ?? [] where segment < min(number, current) {
      try? FileManager.default.removeItem(atPath: Self.segmentPath(directory, segment))
    }
  }

  private static func segmentNumbers(_ directory: String) throws -> [Int] {
    try FileManager.default.contentsOfDirectory(atPath: directory).compactMap { name -> Int? in
      guard name.hasSuffix(".spool") else { return nil }
      guard let number = Int(name.dropLast(".spool".count)) else {
        throw SpoolError("\(directory)/\(name) is not a spool segment (its name is not a number)")
      }
      return number
    }.sorted()
  }

  static func segmentPath(_ directory: String, _ number: Int) -> String {
    let digits = String(number)
    return directory + "/" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".spool"
  }

  /// A new segment holding `header`, synced with its directory entry.
  private static func create(_ path: String, header: [UInt8], directory: String) throws -> Int32 {
    let descriptor = systemOpen(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0o644)
    guard descriptor >= 0 else { throw SpoolError("cannot create \(path): \(reason())") }
    do {
      try write(header, to: descriptor, path: path)
      guard fsync(descriptor) == 0 else { throw SpoolError("fsync of \(path) failed: \(reason())") }
    } catch {
      close(descriptor)
      throw error
    }
    let folder = systemOpen(directory, O_RDONLY, 0)
    if folder >= 0 {
      _ = fsync(folder)
      close(folder)
    }
    return descriptor
  }

  private static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
    var written = 0
    while written < bytes.count {
      let count = bytes[written...].withUnsafeBytes { systemWrite(descriptor, $0) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { throw SpoolError("writing \(path) failed: \(reason())") }
      written += count
    }
  }

  private static func reason() -> String { String(cString: strerror(errno)) }
}

/// `open(2)`, by a name that does not clash with ``SpoolSegments/open(_:)``.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
  #if canImport(Glibc)
    Glibc.open(path, flags, mode)
  #else
    Darwin.open(path, flags, mode)
  #endif
}

/// `write(2)`, likewise.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Int {
  #if canImport(Glibc)
    Glibc.write(descriptor, buffer.baseAddress, buffer.count)
  #else
    Darwin.write(descriptor, buffer.baseAddress, buffer.count)
  #endif
}
