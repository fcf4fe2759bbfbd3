import CollectorReports
import NIOCore

/// How a funnel's rows (read from `Native` blocks, ``UnitRowReader``) hold a unit's step events:
/// each row starts with the unit's hash (`UInt64`), then either
/// - ``Kind/packed``: its events packed (`Array(Int64)`, each `time << nameBits | place`, the
///   events grouped by device on the server, any names in one row); or
/// - ``Kind/named``: one name's place (`UInt8`) and its events' times, each in ms from the range's
///   start (`Array(UInt32)`, or `Array(Int64)` when the range is longer than `UInt32` holds:
///   49.7 days): the closed days' rows, one per step name and device. Half the bytes of packed
///   events, for the server to write and the collector to read (the 20-step funnel at 10M events:
///   33 MB where packed events took 62, `Docs/Benchmarks.md`).
///
/// Every event read is checked: its time within the range, its name among the walk's.
struct FunnelRowFormat: Sendable, Equatable {
  /// What a row holds after its unit.
  enum Kind: Sendable, Equatable {
    case packed
    /// A name's place and its times, 4 bytes each unless `wide` (8).
    case named(wide: Bool)
  }

  let kind: Kind
  /// How many names a packed event may name (``PackedFunnelWalk/names``).
  let names: Int
  /// The range's length in ms: every time is less.
  let span: Int64

  /// Rows of packed events.
  static func packed(names: Int, span: Int64) -> Self { Self(kind: .packed, names: names, span: span) }

  /// Rows of one name's times, 4 bytes a time when `span` allows.
  static func named(names: Int, span: Int64) -> Self {
    Self(kind: .named(wide: span > Int64(UInt32.max)), names: names, span: span)
  }

  /// The ClickHouse type of a named row's times (``Kind/named``).
  var timeType: String { kind == .named(wide: false) ? "UInt32" : "Int64" }

  /// The bytes of one event in a row.
  var eventBytes: Int { kind == .named(wide: false) ? 4 : 8 }

  /// The ClickHouse types of a row's columns, in order.
  var columnTypes: [String] {
    kind == .packed ? ["UInt64", "Array(Int64)"] : ["UInt64", "UInt8", "Array(\(timeType))"]
  }

  /// Appends the events of `row` (a row read in this format) to `events`, packed (`time << nameBits
  /// | place`), each checked; the array grows once.
  func append(_ row: UnitRowReader.Row, to events: inout [Int64]) throws {
    let (bits, span, place) = (PackedFunnelWalk.nameBits, span, Int64(row.place))
    guard place < names else { throw FunnelRows.Malformed(reason: "a row of the name at \(place)") }
    try row.events.withUnsafeReadableBytes { bytes in
      switch kind {
      case .packed:
        try fill(&events, count: bytes.count / 8) {
          Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self))
        }
      case .named(wide: false):
        try fill(&events, count: bytes.count / 4) {
          Int64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) << bits | place
        }
      case .named(wide: true):
        try fill(&events, count: bytes.count / 8) {
          let time = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self))
          return (0..<span).contains(time) ? time << bits | place : -1
        }
      }
    }
  }

  /// Appends `count` packed events, the `index`th `event(index)`, to `events`, each checked: a time
  /// within the span and a name among the names.
  @inline(__always)
  private func fill(_ events: inout [Int64], count: Int, _ event: (Int) -> Int64) throws {
    let (first, bits, mask) = (events.count, PackedFunnelWalk.nameBits, Int64(1) << PackedFunnelWalk.nameBits - 1)
    let (names, span) = (Int64(names), span)
    events.append(contentsOf: repeatElement(0, count: count))
    try events.withUnsafeMutableBufferPointer { added in
      for index in 0..<count {
        let packed = event(index)
        guard packed >= 0, packed >> bits < span, packed & mask < names else {
          throw FunnelRows.Malformed(reason: "an event packed as \(packed), in a range of \(span) ms")
        }
        added[first + index] = packed
      }
    }
  }
}

/// Reads a funnel's rows (``FunnelRowFormat``) from the pieces of a `Native` answer: ClickHouse's
/// blocks, each its row count and its columns one after another (the units' hashes, the names'
/// places, the arrays' ends, then all their elements). A block cut between two pieces waits for the
/// rest; its rows are read once it is whole, each a unit, a place and a slice of the elements.
///
/// `Native`, not `RowBinary`: the server writes an array column's elements in one copy where
/// `RowBinary` writes them one at a time (the 20-step funnel's 327 MB at 100M events: 1.07 s
/// against 1.45 s to `curl`, `Docs/Benchmarks.md`).
struct UnitRowReader: Sendable {
  /// One whole row: its unit, its name's place (0 for packed events) and its events' bytes.
  struct Row: Sendable {
    var unit: UInt64
    var place: UInt8
    var events: ByteBuffer
  }

  /// The rows' format.
  let format: FunnelRowFormat
  /// The bytes after the last whole block (no block's rows hold them, so they grow in place).
  private var pending = ByteBuffer()
  private var block = Block()

  init(format: FunnelRowFormat) { self.format = format }

  /// Adds the answer's next piece.
  mutating func append(_ piece: ByteBuffer) {
    if pending.readableBytes == 0 {
      pending = piece
    } else {
      var piece = piece
      pending.writeBuffer(&piece)
    }
  }

  /// The next whole row, or `nil` when it is not all there yet.
  mutating func next() throws -> Row? {
    while block.next == block.rows {
      guard let whole = try nextBlock() else { return nil }
      block = whole
    }
    return try block.row(format: format)
  }

  /// Throws when the answer ended inside a block.
  func finished() throws {
    guard pending.readableBytes == 0 else { throw FunnelRows.Malformed(reason: "its last block is cut short") }
  }

  /// The next block once it is whole (`nil` before), its columns checked against the format's.
  private mutating func nextBlock() throws -> Block? {
    var bytes = pending
    guard let columns = try Self.length(&bytes), let rows = try Self.length(&bytes) else { return nil }
    var block = Block(rows: rows)
    if columns != 0 || rows != 0 {
      let types = format.columnTypes
      guard columns == types.count else {
        throw FunnelRows.Malformed(reason: "a block of \(columns) columns, not \(types.count)")
      }
      for (column, type) in types.enumerated() {
        guard try Self.text(&bytes) != nil, let sent = try Self.text(&bytes) else { return nil }
        guard sent == type else { throw FunnelRows.Malformed(reason: "column \(column + 1) is \(sent), not \(type)") }
        guard try block.read(column: column, of: types.count, from: &bytes, elementBytes: format.eventBytes) else {
          return nil
        }
      }
    }
    // The block's rows hold slices of these bytes: what follows is copied out, to grow on its own.
    pending = ByteBufferAllocator().buffer(capacity: bytes.readableBytes)
    pending.writeBuffer(&bytes)
    return block
  }

  /// A LEB128 length, or `nil` when its bytes are not all there.
  private static func length(_ bytes: inout ByteBuffer) throws -> Int? {
    var (value, shift) = (0, 0)
    while let byte = bytes.readInteger(as: UInt8.self) {
      guard shift < 35 else { throw FunnelRows.Malformed(reason: "a length longer than any answer") }
      value |= Int(byte & 0x7F) << shift
      if byte & 0x80 == 0 { return value }
      shift += 7
    }
    return nil
  }

  /// A column's name or type, or `nil` when its bytes are not all there.
  private static func text(_ bytes: inout ByteBuffer) throws -> String? {
    guard let count = try length(&bytes) else { return nil }
    guard count <= 1_024 else { throw FunnelRows.Malformed(reason: "a column name of \(count) bytes") }
    return bytes.readString(length: count)
  }

  /// One whole block's columns, and the next of its rows to read.
  private struct Block: Sendable {
    var rows = 0
    var next = 0
    var units = ByteBuffer()
    var places: ByteBuffer?
    /// Each row's end in ``elements``, counted in elements (`UInt64`).
    var ends = ByteBuffer()
    var elements = ByteBuffer()

    /// Reads column `column` of `columns` (the last an array of `elementBytes` elements); `false`
    /// when its bytes are not all there.
    mutating func read(column: Int, of columns: Int, from bytes: inout ByteBuffer, elementBytes: Int) throws -> Bool {
      guard rows <= Int(UInt32.max) else { throw FunnelRows.Malformed(reason: "a block of \(rows) rows") }
      switch column {
      case 0:
        guard let units = bytes.readSlice(length: rows * 8) else { return false }
        self.units = units
      case columns - 1:
        guard let ends = bytes.readSlice(length: rows * 8) else { return false }
        self.ends = ends
        let count = end(ofRow: rows - 1)
        guard count <= UInt64(UInt32.max) else { throw FunnelRows.Malformed(reason: "a block of \(count) events") }
        guard let elements = bytes.readSlice(length: Int(count) * elementBytes) else { return false }
        self.elements = elements
      default:
        guard let places = bytes.readSlice(length: rows) else { return false }
        self.places = places
      }
      return true
    }

    /// Where row `row` ends in ``elements``, in elements (0 before the first row).
    func end(ofRow row: Int) -> UInt64 {
      row < 0 ? 0 : ends.getInteger(at: ends.readerIndex + row * 8, endianness: .little, as: UInt64.self) ?? 0
    }

    /// The next row, its end checked against the one before and the block's elements.
    mutating func row(format: FunnelRowFormat) throws -> Row {
      defer { next += 1 }
      let (start, end, bytes) = (end(ofRow: next - 1), end(ofRow: next), format.eventBytes)
      guard start <= end, end <= UInt64(elements.readableBytes / bytes),
        let events = elements.getSlice(
          at: elements.readerIndex + Int(start) * bytes, length: Int(end - start) * bytes)
      else {
        let count = elements.readableBytes / bytes
        throw FunnelRows.Malformed(reason: "a row ending at \(end), after \(start), in a block of \(count) events")
      }
      return Row(
        unit: units.getInteger(at: units.readerIndex + next * 8, endianness: .little, as: UInt64.self) ?? 0,
        place: places.flatMap { $0.getInteger(at: $0.readerIndex + next, as: UInt8.self) } ?? 0, events: events)
    }
  }
}
