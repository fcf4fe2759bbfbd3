/// CRC-32 (IEEE 802.3, the polynomial of gzip and zlib), for outbox records and gzip trailers.
///
/// Slicing-by-8: eight tables, eight bytes per step.
enum CRC32 {
  /// `tables[k * 256 + i]`: table `k` of the slicing-by-8 method; table 0 is the classic one.
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for index in 0..<256 {
      var crc = UInt32(index)
      for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
      tables[index] = crc
    }
    for table in 1..<8 {
      for index in 0..<256 {
        let previous = tables[(table - 1) * 256 + index]
        tables[table * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xff)]
      }
    }
    return tables
  }()

  /// The CRC of `bytes`, continuing from `crc` (0 to start).
  static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    var value = ~crc
    tables.withUnsafeBufferPointer { t in
      var index = 0
      let count = bytes.count
      while index + 8 <= count {
        let one = bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian ^ value
        let two = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
        value =
          t[7 * 256 + Int(one & 0xff)] ^ t[6 * 256 + Int((one >> 8) & 0xff)] ^ t[5 * 256 + Int((one >> 16) & 0xff)]
          ^ t[4 * 256 + Int(one >> 24)] ^ t[3 * 256 + Int(two & 0xff)] ^ t[2 * 256 + Int((two >> 8) & 0xff)]
          ^ t[256 + Int((two >> 16) & 0xff)] ^ t[Int(two >> 24)]
        index += 8
      }
      while index < count {
        value = t[Int((value ^ UInt32(bytes[index])) & 0xff)] ^ (value >> 8)
        index += 1
      }
    }
    return ~value
  }

  /// The CRC of `bytes`, continuing from `crc` (0 to start).
  static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0, continuing: crc) }
  }
}
