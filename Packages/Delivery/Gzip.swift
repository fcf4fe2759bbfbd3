/// Gzip compression in plain Swift (RFC 1951 deflate with fixed Huffman codes and LZ77 matching,
/// RFC 1952 framing): Delivery depends on nothing but CoreTracker, so no zlib.
///
/// Event batches are repetitive JSON; LZ77 with fixed codes takes them to a fraction of their size
/// at a few nanoseconds per byte. Any gzip reader (zlib, the collector) can read the result.
public enum Gzip {
  /// `bytes` as a gzip member.
  public static func compress(_ bytes: [UInt8]) -> [UInt8] {
    var output: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]
    output.reserveCapacity(bytes.count / 3 + 32)
    var writer = BitWriter(output: output)
    Deflater.deflate(bytes, into: &writer)
    output = writer.finish()
    let crc = CRC32.checksum(bytes)
    for value in [crc, UInt32(truncatingIfNeeded: bytes.count)] {
      for shift in stride(from: 0, to: 32, by: 8) { output.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    return output
  }
}

/// Writes bits least-significant first, as deflate's bit stream wants.
struct BitWriter {
  private(set) var output: [UInt8]
  private var buffer: UInt64 = 0
  private var count = 0

  init(output: [UInt8]) { self.output = output }

  mutating func write(_ bits: UInt32, count bitCount: Int) {
    buffer |= UInt64(bits) << UInt64(count)
    count += bitCount
    while count >= 8 {
      output.append(UInt8(truncatingIfNeeded: buffer))
      buffer >>= 8
      count -= 8
    }
  }

  /// Writes a Huffman code, which deflate stores most-significant bit first.
  mutating func writeCode(_ code: UInt32, length: Int) {
    var reversed: UInt32 = 0
    var code = code
    for _ in 0..<length {
      reversed = reversed << 1 | (code & 1)
      code >>= 1
    }
    write(reversed, count: length)
  }

  mutating func finish() -> [UInt8] {
    if count > 0 { output.append(UInt8(truncatingIfNeeded: buffer)) }
    buffer = 0
    count = 0
    return output
  }
}

enum Deflater {
  static let lengthBase: [Int] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
  ]
  static let lengthExtra: [Int] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
  ]
  static let distanceBase: [Int] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
    6145, 8193, 12289, 16385, 24577,
  ]
  static let distanceExtra: [Int] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
  ]

  static let window = 32 * 1024
  static let hashBits = 15
  static let maxChain = 32
  static let minMatch = 3
  static let maxMatch = 258

  /// One final block with the fixed Huffman codes.
  static func deflate(_ input: [UInt8], into writer: inout BitWriter) {
    writer.write(1, count: 1)  // BFINAL
    writer.write(1, count: 2)  // BTYPE = 01, fixed codes
    let count = input.count
    var head = [Int32](repeating: -1, count: 1 << hashBits)
    var previous = [Int32](repeating: -1, count: window)
    input.withUnsafeBufferPointer { bytes in
      func hash(_ at: Int) -> Int {
        let value = UInt32(bytes[at]) << 16 | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2])
        return Int((value &* 2_654_435_761) >> UInt32(32 - hashBits))
      }
      func insert(_ at: Int) {
        guard at + minMatch <= count else { return }
        let h = hash(at)
        previous[at & (window - 1)] = head[h]
        head[h] = Int32(at)
      }
      var position = 0
      while position < count {
        var bestLength = 0
        var bestDistance = 0
        if position + minMatch <= count {
          var candidate = Int(head[hash(position)])
          var chain = maxChain
          let limit = min(maxMatch, count - position)
          while candidate >= 0, position - candidate <= window, chain > 0 {
            if bytes[candidate + bestLength] == bytes[position + bestLength] || bestLength == 0 {
              var length = 0
              while length < limit && bytes[candidate + length] == bytes[position + length] { length += 1 }
              if length > bestLength {
                bestLength = length
                bestDistance = position - candidate
                if length == limit { break }
              }
            }
            let next = Int(previous[candidate & (window - 1)])
            if next >= candidate { break }
            candidate = next
            chain -= 1
          }
        }
        if bestLength >= minMatch {
          writeLength(bestLength, into: &writer)
          writeDistance(bestDistance, into: &writer)
          for offset in 0..<bestLength { insert(position + offset) }
          position += bestLength
        } else {
          writeLiteral(Int(bytes[position]), into: &writer)
          insert(position)
          position += 1
        }
      }
    }
    writeLiteral(256, into: &writer)  // end of block
  }

  static func writeLiteral(_ symbol: Int, into writer: inout BitWriter) {
    switch symbol {
    case 0...143: writer.writeCode(UInt32(0x30 + symbol), length: 8)
    case 144...255: writer.writeCode(UInt32(0x190 + symbol - 144), length: 9)
    case 256...279: writer.writeCode(UInt32(symbol - 256), length: 7)
    default: writer.writeCode(UInt32(0xC0 + symbol - 280), length: 8)
    }
  }

  static func writeLength(_ length: Int, into writer: inout BitWriter) {
    var code = lengthBase.count - 1
    while lengthBase[code] > length { code -= 1 }
    writeLiteral(257 + code, into: &writer)
    if lengthExtra[code] > 0 { writer.write(UInt32(length - lengthBase[code]), count: lengthExtra[code]) }
  }

  static func writeDistance(_ distance: Int, into writer: inout BitWriter) {
    var code = distanceBase.count - 1
    while distanceBase[code] > distance { code -= 1 }
    writer.writeCode(UInt32(code), length: 5)
    if distanceExtra[code] > 0 { writer.write(UInt32(distance - distanceBase[code]), count: distanceExtra[code]) }
  }
}
