import CoreTracker
import Foundation

extension Outbox {
  func segmentURL(_ sequence: UInt64) -> URL {
    let hex = String(sequence, radix: 16)
    return directory.appendingPathComponent("segment-" + String(repeating: "0", count: 16 - hex.count) + hex + ".ctq")
  }

  static func sequence(ofSegmentNamed name: String) -> UInt64? {
    guard name.hasPrefix("segment-"), name.hasSuffix(".ctq"), name.count == 8 + 16 + 4 else { return nil }
    return UInt64(name.dropFirst(8).prefix(16), radix: 16)
  }

  /// Maps the existing segments, keeps their valid records, deletes segments already delivered.
  func recover() throws {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    let sequences = names.compactMap(Self.sequence(ofSegmentNamed:)).sorted()
    for sequence in sequences {
      let url = segmentURL(sequence)
      guard sequence >= cursor.segment else {
        try? FileManager.default.removeItem(at: url)
        continue
      }
      let (file, originalSize) = try MappedFile.open(url, size: configuration.segmentBytes)
      let storedSequence = UInt64(littleEndian: file.base.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
      guard originalSize >= Self.segmentHeaderSize,
        UInt32(littleEndian: file.base.load(fromByteOffset: 0, as: UInt32.self)) == Self.magic,
        storedSequence == sequence
      else {
        // Not a segment this outbox wrote completely (torn at creation): nothing in it to keep.
        try? FileManager.default.removeItem(at: url)
        continue
      }
      var offset = Self.segmentHeaderSize
      let limit = min(originalSize, configuration.segmentBytes)
      while offset + Self.recordHeaderSize <= limit {
        let base = file.base + offset
        let length = Int(UInt32(littleEndian: base.load(fromByteOffset: 0, as: UInt32.self)))
        let size = Self.recordSize(length)
        guard length > 0, offset + size <= limit,
          UInt32(littleEndian: base.load(fromByteOffset: 4, as: UInt32.self))
            == Self.checksum(base, payloadCount: length)
        else { break }
        if sequence > cursor.segment || offset >= cursor.offset {
          queuedRecords += 1
          queuedBytes += size
        }
        offset += size
      }
      // Whatever follows the last valid record is damage or free space: clear it for new records.
      (file.base + offset).initializeMemory(as: UInt8.self, repeating: 0, count: configuration.segmentBytes - offset)
      segments.append(Segment(sequence: sequence, file: file, end: offset))
    }
    if let first = segments.first, first.sequence > cursor.segment {
      cursor = OutboxPosition(segment: first.sequence, offset: 0)
    }
    while queuedRecords > configuration.maximumRecords { dropOldestRecord() }
  }
}
