import Foundation

/// The outbox's cursor file: two 32-byte slots written alternately, each with its generation and a
/// CRC; the newer valid one wins, so a write torn by a crash leaves the previous cursor.
///
/// Not thread-safe: the outbox uses it under its lock.
final class OutboxCursorFile {
  private let handle: FileHandle
  private var generation: UInt32
  /// The cursor found when the file was opened (the start when there was none).
  let stored: OutboxPosition

  /// Opens the file at `url`, created if needed.
  init(url: URL) throws {
    if !FileManager.default.fileExists(atPath: url.path) {
      _ = FileManager.default.createFile(atPath: url.path, contents: Data(count: 64))
    }
    handle = try FileHandle(forUpdating: url)
    (stored, generation) = Self.read(handle)
  }

  deinit {
    try? handle.close()
  }

  private static func read(_ handle: FileHandle) -> (OutboxPosition, UInt32) {
    let data = (try? handle.seek(toOffset: 0)).flatMap { _ in try? handle.read(upToCount: 64) } ?? Data()
    let bytes = [UInt8](data) + [UInt8](repeating: 0, count: max(0, 64 - data.count))
    var best: (OutboxPosition, UInt32)?
    for slot in 0..<2 {
      let slice = Array(bytes[(slot * 32)..<(slot * 32 + 32)])
      let stored = slice.withUnsafeBytes { raw in
        (
          UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
          UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
          UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self)),
          UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 20, as: UInt32.self))
        )
      }
      guard stored.3 != 0, CRC32.checksum(Array(slice[0..<20])) == stored.3 else { continue }
      if best == nil || stored.2 > best!.1 {
        best = (OutboxPosition(segment: stored.0, offset: Int(stored.1)), stored.2)
      }
    }
    return best ?? (OutboxPosition(segment: 0, offset: 0), 0)
  }

  /// Writes `cursor` into the older slot.
  func write(_ cursor: OutboxPosition) {
    generation &+= 1
    var slot = [UInt8](repeating: 0, count: 32)
    slot.withUnsafeMutableBytes { raw in
      raw.storeBytes(of: cursor.segment.littleEndian, toByteOffset: 0, as: UInt64.self)
      raw.storeBytes(of: UInt64(cursor.offset).littleEndian, toByteOffset: 8, as: UInt64.self)
      raw.storeBytes(of: generation.littleEndian, toByteOffset: 16, as: UInt32.self)
    }
    let checksum = CRC32.checksum(Array(slot[0..<20]))
    slot.withUnsafeMutableBytes { $0.storeBytes(of: checksum.littleEndian, toByteOffset: 20, as: UInt32.self) }
    try? handle.seek(toOffset: UInt64(Int(generation % 2) * 32))
    try? handle.write(contentsOf: Data(slot))
  }
}
