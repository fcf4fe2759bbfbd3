import CollectorStore
import Foundation

/// How the ingest spool (``SpooledEventStore``) writes batches to its files.
///
/// A segment file starts with a header: the magic `CTSPOOL1`, then the names of the event and the
/// counter columns in the order its rows hold them (``StoredRow/columns``, the one declaration of
/// the rows), so a collector of a later version reads a segment an earlier one wrote by name (a
/// column it does not find is left as the row's blank value). Then records, one per committed
/// group: its payload's length and FNV-1a checksum (four bytes each, little-endian), and the
/// payload: the events' values column by column, the counters' likewise, and the quarantined
/// entries, submissions and client drops as JSON (rare, small). A record cut short by a crash
/// before its `fsync` returned (never acknowledged) fails its length or checksum, and it and what
/// follows are ignored.
enum SpoolCoding {
  static let magic = Array("CTSPOOL1".utf8)

  /// What a segment's header says: where each of this build's columns is in its rows.
  struct Layout: Sendable {
    var eventColumns: [String]
    var counterColumns: [String]

    /// This build's columns.
    static let current = Layout(
      eventColumns: StoredEvent.columns.map(\.name), counterColumns: StoredCounter.columns.map(\.name))
  }

  /// The header of a segment this build writes.
  static func header() -> [UInt8] {
    var writer = SpoolWriter()
    writer.bytes += magic
    for names in [Layout.current.eventColumns, Layout.current.counterColumns] {
      writer.integer(UInt32(names.count))
      for name in names { writer.text(name) }
    }
    return writer.bytes
  }

  /// The layout a segment's header gives and where its first record starts.
  static func header(_ bytes: [UInt8]) throws(SpoolError) -> (layout: Layout, end: Int) {
    var reader = SpoolReader(bytes[...])
    guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else {
      throw SpoolError("not a spool segment (no CTSPOOL1 header)")
    }
    reader.offset = magic.count
    var lists: [[String]] = []
    for _ in 0..<2 {
      var names: [String] = []
      for _ in 0..<(try reader.integer(UInt32.self)) { names.append(try reader.text()) }
      lists.append(names)
    }
    return (Layout(eventColumns: lists[0], counterColumns: lists[1]), reader.offset)
  }

  /// One framed record of `batch`.
  static func record(_ batch: StoreBatch) throws -> [UInt8] {
    // The frame's eight bytes first, filled in at the end: the payload is written once, in place
    // (a record of a few thousand rows is a megabyte or more).
    var payload = SpoolWriter()
    payload.bytes.reserveCapacity(64 + batch.events.reduce(0) { $0 + 256 + $1.parametersJSON.utf8.count })
    payload.bytes += [UInt8](repeating: 0, count: 8)
    rows(batch.events, into: &payload)
    rows(batch.counters, into: &payload)
    let rest = Rest(quarantined: batch.quarantined, submissions: batch.submissions, clientDrops: batch.clientDrops)
    if rest.isEmpty {
      payload.integer(UInt32(0))
    } else {
      let json = Array(try JSONEncoder().encode(rest))
      payload.integer(UInt32(json.count))
      payload.bytes += json
    }
    var frame = SpoolWriter()
    frame.integer(UInt32(payload.bytes.count - 8))
    frame.integer(checksum(payload.bytes[8...]))
    payload.bytes.replaceSubrange(0..<8, with: frame.bytes)
    return payload.bytes
  }

  /// The batches of the records from `start`, and where the last whole record ends (a torn or
  /// damaged record and everything after it are left out).
  static func records(_ bytes: [UInt8], from start: Int, layout: Layout) -> (batches: [StoreBatch], end: Int) {
    var batches: [StoreBatch] = []
    var offset = start
    while bytes.count - offset >= 8 {
      var frame = SpoolReader(bytes[offset..<offset + 8])
      guard let length = try? Int(frame.integer(UInt32.self)), let sum = try? frame.integer(UInt32.self),
        bytes.count - offset - 8 >= length
      else { break }
      let payload = bytes[offset + 8..<offset + 8 + length]
      guard checksum(payload) == sum, let batch = try? self.batch(payload, layout: layout) else { break }
      batches.append(batch)
      offset += 8 + length
    }
    return (batches, offset)
  }

  private static func batch(_ payload: ArraySlice<UInt8>, layout: Layout) throws -> StoreBatch {
    var reader = SpoolReader(payload)
    var batch = StoreBatch()
    batch.events = try rows(&reader, columns: layout.eventColumns)
    batch.counters = try rows(&reader, columns: layout.counterColumns)
    let length = Int(try reader.integer(UInt32.self))
    if length > 0 {
      let rest = try JSONDecoder().decode(Rest.self, from: Data(try reader.take(length)))
      batch.quarantined = rest.quarantined
      batch.submissions = rest.submissions
      batch.clientDrops = rest.clientDrops
    }
    return batch
  }

  private static func rows<Row: StoredRow>(_ rows: [Row], into writer: inout SpoolWriter) {
    writer.integer(UInt32(rows.count))
    let columns = Row.columns
    for row in rows {
      for column in columns { writer.value(column.value(row)) }
    }
  }

  private static func rows<Row: StoredRow>(_ reader: inout SpoolReader, columns names: [String]) throws -> [Row] {
    let count = Int(try reader.integer(UInt32.self))
    let byName = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    let places = Row.columns.map { byName[$0.name] }
    var values = [SQLValue](repeating: .null, count: names.count)
    var result: [Row] = []
    result.reserveCapacity(count)
    for _ in 0..<count {
      for index in values.indices { values[index] = try reader.value() }
      var index = 0
      result.append(
        Row { _ in
          defer { index += 1 }
          return places[index].map { values[$0] } ?? .null
        })
    }
    return result
  }

  /// FNV-1a over the payload: enough to tell a torn write from a whole one.
  static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var hash: UInt32 = 2_166_136_261
    for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
    return hash
  }

  /// The rows of a batch that are neither events nor counters.
  private struct Rest: Codable {
    var quarantined: [QuarantinedEntry]
    var submissions: [StoredSubmission]
    var clientDrops: [StoredClientDrop]
    var isEmpty: Bool { quarantined.isEmpty && submissions.isEmpty && clientDrops.isEmpty }
  }
}

/// What is wrong with a spool file.
struct SpoolError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// Little-endian integers and length-prefixed UTF-8 text.
struct SpoolWriter {
  var bytes: [UInt8] = []

  mutating func integer<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
  }

  mutating func text(_ text: String) {
    integer(UInt32(text.utf8.count))
    bytes += text.utf8
  }

  /// A tag (0 null, 1 integer, 2 double, 3 text) and the value.
  mutating func value(_ value: SQLValue) {
    switch value {
    case .null: bytes.append(0)
    case .int(let number):
      bytes.append(1)
      integer(number)
    case .double(let number):
      bytes.append(2)
      integer(number.bitPattern)
    case .text(let text):
      bytes.append(3)
      self.text(text)
    }
  }
}

/// Reads what ``SpoolWriter`` wrote; every read past the end throws.
struct SpoolReader {
  let bytes: ArraySlice<UInt8>
  var offset: Int

  init(_ bytes: ArraySlice<UInt8>) {
    self.bytes = bytes
    offset = bytes.startIndex
  }

  mutating func take(_ count: Int) throws(SpoolError) -> ArraySlice<UInt8> {
    guard count >= 0, bytes.endIndex - offset >= count else { throw SpoolError("a record ends early") }
    defer { offset += count }
    return bytes[offset..<offset + count]
  }

  mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(SpoolError) -> T {
    let slice = try take(MemoryLayout<T>.size)
    var value = T.zero
    for (shift, byte) in slice.enumerated() { value |= T(byte) << (shift * 8) }
    return value
  }

  mutating func text() throws(SpoolError) -> String {
    let count = Int(try integer(UInt32.self))
    return String(decoding: try take(count), as: UTF8.self)
  }

  mutating func value() throws(SpoolError) -> SQLValue {
    switch try take(1).first {
    case 0: .null
    case 1: .int(try integer(Int64.self))
    case 2: .double(Double(bitPattern: try integer(UInt64.self)))
    case 3: .text(try text())
    default: throw SpoolError("a value has an unknown tag")
    }
  }
}
