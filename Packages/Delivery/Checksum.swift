/// CRC-32 (IEEE 802.3, the polynomial of gzip and zlib), for outbox records and gzip trailers.
enum CRC32 {
  private static let table: [UInt32] = (0..<256).map { index -> UInt32 in
    var crc = UInt32(index)
    for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    return crc
  }

  /// The CRC of `bytes`, continuing from `crc` (0 to start).
  static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    var value = ~crc
    table.withUnsafeBufferPointer { table in
      for byte in bytes { value = table[Int((value ^ UInt32(byte)) & 0xff)] ^ (value >> 8) }
    }
    return ~value
  }

  /// The CRC of `bytes`, continuing from `crc` (0 to start).
  static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0, continuing: crc) }
  }
}
