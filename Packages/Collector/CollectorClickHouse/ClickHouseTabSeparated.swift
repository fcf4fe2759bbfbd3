import CollectorStore
import NIOCore

/// Rows in ClickHouse's `TabSeparated` format, written straight into one byte buffer: what the
/// store's bulk inserts send (the events and counters) and what external data tables hold.
///
/// A field is its value's text with `\`, tab, line feed, carriage return and NUL escaped; `NULL` is
/// `\N`; an array of strings is `['a','b']`, each element quoted with `'` and `\` escaped as well.
/// An escaped field holds no tab and no line break, so fields and rows cannot run into each other
/// whatever the text (`ClickHouseSQLTests` sends hostile text both ways and reads it back).
/// Against `JSONEachRow` the body is about half the size and ClickHouse parses it faster (50,000
/// events: 17.8 against 31.2 MB, inserted in 161–172 against 173–229 ms, measured by hand on 18.16).
struct ClickHouseTabSeparated {
  /// The format's name in an `INSERT … FORMAT` statement.
  static let format = "TabSeparated"

  /// The rows written, as a request body (written into directly: no copy at the end).
  private(set) var buffer: ByteBuffer
  private var atRowStart = true

  init(capacity: Int = 0) { buffer = ByteBufferAllocator().buffer(capacity: capacity) }

  /// Writes `text` as the next field.
  mutating func text(_ text: String) {
    separate()
    escaped(text, quote: nil)
  }

  /// Writes `number` as the next field.
  mutating func integer(_ number: Int64) {
    separate()
    // Its digits written straight in: a `String` a number cost an allocation, four a row.
    var magnitude = number.magnitude
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: the 20 digits of any Int64
    let count = withUnsafeMutableBytes(of: &digits) { space in
      var end = space.count
      repeat {
        end -= 1
        space[end] = UInt8(ascii: "0") + UInt8(magnitude % 10)
        magnitude /= 10
      } while magnitude > 0
      return space.count - end
    }
    if number < 0 { buffer.writeInteger(UInt8(ascii: "-")) }
    withUnsafeBytes(of: &digits) { _ = buffer.writeBytes(UnsafeRawBufferPointer(rebasing: $0[($0.count - count)...])) }
  }

  /// Writes `number` as the next field (`inf`, `-inf` and `nan` as ClickHouse reads them).
  mutating func double(_ number: Double) {
    separate()
    let text = number.isNaN ? "nan" : number.isInfinite ? (number < 0 ? "-inf" : "inf") : String(number)
    buffer.writeString(text)
  }

  /// Writes `NULL` as the next field.
  mutating func null() {
    separate()
    buffer.writeStaticString("\\N")
  }

  /// Writes `value` as the next field.
  mutating func value(_ value: SQLValue) {
    switch value {
    case .text(let text): self.text(text)
    case .int(let number): integer(number)
    case .double(let number): double(number)
    case .null: null()
    }
  }

  /// Writes an `Array(String)` field.
  mutating func array(_ items: [String]) {
    separate()
    buffer.writeInteger(UInt8(ascii: "["))
    for (index, item) in items.enumerated() {
      if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
      buffer.writeInteger(UInt8(ascii: "'"))
      escaped(item, quote: UInt8(ascii: "'"))
      buffer.writeInteger(UInt8(ascii: "'"))
    }
    buffer.writeInteger(UInt8(ascii: "]"))
  }

  /// Ends the row.
  mutating func endRow() {
    buffer.writeInteger(UInt8(ascii: "\n"))
    atRowStart = true
  }

  /// Writes `columns` (a row type's declared ``StoredRow/columns``, taken once for all its rows) of
  /// `row`, in order.
  mutating func columns<Row: StoredRow>(_ columns: [StoredColumn<Row>], of row: Row) {
    for column in columns { value(column.value(row)) }
  }

  private mutating func separate() {
    if atRowStart {
      atRowStart = false
    } else {
      buffer.writeInteger(UInt8(ascii: "\t"))
    }
  }

  private mutating func escaped(_ text: String, quote: UInt8?) {
    let utf8 = text.utf8
    // Nearly every field needs no escape: looked for in the string's own bytes (a native string's
    // are contiguous), the quote as a plain byte (a backslash again when there is none).
    let special = quote ?? 0x5C
    let plain = utf8.withContiguousStorageIfAvailable { Self.isPlain($0, special) } ?? Self.isPlain(utf8, special)
    guard !plain else {
      buffer.writeString(text)
      return
    }
    for byte in utf8 {
      switch byte {
      case 0x5C: buffer.writeBytes([0x5C, 0x5C])
      case 0x09: buffer.writeBytes([0x5C, UInt8(ascii: "t")])
      case 0x0A: buffer.writeBytes([0x5C, UInt8(ascii: "n")])
      case 0x0D: buffer.writeBytes([0x5C, UInt8(ascii: "r")])
      case 0x00: buffer.writeBytes([0x5C, UInt8(ascii: "0")])
      case quote: buffer.writeBytes([0x5C, byte])
      default: buffer.writeInteger(byte)
      }
    }
  }

  /// Whether `bytes` hold no control byte, no backslash and no `special`.
  private static func isPlain<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ special: UInt8) -> Bool {
    for byte in bytes where byte < 0x20 || byte == 0x5C || byte == special { return false }
    return true
  }
}
