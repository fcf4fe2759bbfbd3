import CollectorStore
import NIOCore
import Testing

@testable import CollectorPostgres

/// The funnel's step events come from PostgreSQL as arrays in their binary form, read in place
/// (``BinaryArray``): text, `bigint`s and `NULL`s, an empty array, and what a damaged answer gives.
@Suite("PostgreSQL binary arrays")
struct PostgresBinaryArrayTests {
  /// An array's binary form: one dimension of `elements` (`nil` for `NULL`), lower bound 1.
  static func array(_ elements: [[UInt8]?], type: UInt32 = 25) -> ByteBuffer {
    var buffer = ByteBuffer()
    buffer.writeInteger(Int32(elements.isEmpty ? 0 : 1))
    buffer.writeInteger(Int32(elements.contains { $0 == nil } ? 1 : 0))
    buffer.writeInteger(type)
    if !elements.isEmpty {
      buffer.writeInteger(Int32(elements.count))
      buffer.writeInteger(Int32(1))
    }
    for element in elements {
      guard let element else {
        buffer.writeInteger(Int32(-1))
        continue
      }
      buffer.writeInteger(Int32(element.count))
      buffer.writeBytes(element)
    }
    return buffer
  }

  static func bigint(_ value: Int64) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
  }

  @Test("text elements, a NULL among them read as empty", arguments: [["phone", "tablet"], ["", "x"], []])
  func text(values: [String]) throws {
    var array = try BinaryArray(Self.array(values.map { Array($0.utf8) } + [nil]))
    #expect(array.count == values.count + 1)
    for value in values { #expect(try array.nextText() == value) }
    #expect(try array.nextText() == "")
  }

  @Test("bigint elements in network order", arguments: [0, 1, -1, 1_793_577_600_000, Int64.min, Int64.max])
  func bigints(value: Int64) throws {
    var array = try BinaryArray(Self.array([Self.bigint(value), nil], type: 20))
    #expect(array.count == 2)
    #expect(try array.nextInt64() == value)
    #expect(try array.nextInt64() == 0)
  }

  @Test("no array (an aggregate of no rows) and an empty one have no elements")
  func empty() throws {
    #expect(try BinaryArray(nil).count == 0)
    #expect(try BinaryArray(Self.array([])).count == 0)
  }

  @Test("a damaged answer is an error, never a read past its end")
  func damaged() throws {
    var cut = Self.array([Array("phone".utf8)])
    cut.moveWriterIndex(to: cut.writerIndex - 2)
    var array = try BinaryArray(cut)
    #expect(throws: StoreError.self) { try array.nextText() }
    var short = try BinaryArray(Self.array([[1, 2, 3]], type: 20))
    #expect(throws: StoreError.self) { try short.nextInt64() }
    var lengthBelowNull = try BinaryArray(Self.array([[1]]).withLength(-2))
    #expect(throws: StoreError.self) { try lengthBelowNull.nextText() }
    var twoDimensions = ByteBuffer()
    twoDimensions.writeInteger(Int32(2))
    #expect(throws: StoreError.self) { try BinaryArray(twoDimensions) }
  }
}

extension ByteBuffer {
  /// The one-element array in this buffer with its element's length set to `length`.
  fileprivate func withLength(_ length: Int32) -> ByteBuffer {
    var copy = self
    copy.setInteger(length, at: readerIndex + 20)
    return copy
  }
}
