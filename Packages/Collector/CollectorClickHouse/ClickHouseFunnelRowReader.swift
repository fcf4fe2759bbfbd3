import CollectorReports
import NIOCore

/// How a funnel's `RowBinary` rows hold a unit's step events: each row starts with the unit's hash
/// (`UInt64`), then either
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

/// Reads a funnel's `RowBinary` rows (``FunnelRowFormat``) from the pieces of an answer: a row cut
/// between two pieces waits for the rest.
struct UnitRowReader: Sendable {
  /// One whole row: its unit, its name's place (0 for packed events) and its events' bytes.
  struct Row: Sendable {
    var unit: UInt64
    var place: UInt8
    var events: ByteBuffer
  }

  /// The rows' format.
  let format: FunnelRowFormat
  private var pending = ByteBuffer()

  init(format: FunnelRowFormat) { self.format = format }

  /// Adds the answer's next piece.
  mutating func append(_ piece: ByteBuffer) {
    if pending.readableBytes == 0 {
      pending = piece
    } else {
      // Joined in a buffer of their own: the rows read before may still hold slices of `pending`.
      var (joined, piece) = (ByteBufferAllocator().buffer(capacity: pending.readableBytes + piece.readableBytes), piece)
      joined.writeBuffer(&pending)
      joined.writeBuffer(&piece)
      pending = joined
    }
  }

  /// The next whole row, or `nil` when it is not all there yet.
  mutating func next() throws -> Row? {
    let start = pending.readerIndex
    let named = format.kind != .packed
    guard let unit = pending.readInteger(endianness: .little, as: UInt64.self),
      let place = named ? pending.readInteger(as: UInt8.self) : 0, let count = try readLength(),
      let events = pending.readSlice(length: count * format.eventBytes)
    else {
      pending.moveReaderIndex(to: start)
      return nil
    }
    return Row(unit: unit, place: place, events: events)
  }

  /// Lets go of the bytes of the rows read (rows kept still hold theirs).
  mutating func compact() { pending = pending.readSlice(length: pending.readableBytes) ?? ByteBuffer() }

  /// Throws when the answer ended inside a row.
  func finished() throws {
    guard pending.readableBytes == 0 else { throw FunnelRows.Malformed(reason: "its last row is cut short") }
  }

  /// A LEB128 length, or `nil` when its bytes are not all there.
  private mutating func readLength() throws -> Int? {
    var (value, shift) = (0, 0)
    while let byte = pending.readInteger(as: UInt8.self) {
      guard shift < 35 else { throw FunnelRows.Malformed(reason: "an array longer than any answer") }
      value |= Int(byte & 0x7F) << shift
      if byte & 0x80 == 0 { return value }
      shift += 7
    }
    return nil
  }
}
