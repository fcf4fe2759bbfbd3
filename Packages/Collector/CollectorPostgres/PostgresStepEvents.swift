public import CollectorStore
import NIOCore
import PostgresNIO

extension PostgresEventStore {
  /// Reads a funnel's step events as four arrays in one row per day of the events (`array_agg` of
  /// each column over the query's rows), then reads the arrays' elements in place into columns.
  ///
  /// One row per event cost the funnel most of its time in the client (PostgresNIO's work per row,
  /// 330,000 rows at 1M events), and so did decoding each array into Swift strings: here an event's
  /// id goes from the answer's bytes to the columns' without a string. The aggregates of one group
  /// see its rows in one order, so the arrays' elements line up. Grouping by day bounds an array's
  /// size (PostgreSQL's limit on a value is 1 GB).
  public func readStepEvents(_ sql: String, _ arguments: [SQLValue]) async throws -> StepEventColumns {
    try await guarded {
      let grouped =
        "SELECT array_agg(device_id) AS d, array_agg(name) AS n, array_agg(t) AS t, array_agg(event_id) AS e "
        + "FROM (\(sql)) s GROUP BY t / 86400000"
      let rows = try await client.query(
        PostgresQuery(unsafeSQL: grouped, binds: Self.bindings(arguments)), logger: logger)
      var columns = StepEventColumns()
      for try await row in rows {
        let cells = Array(row)
        guard cells.count == 4 else { throw StoreError.unavailable("step events: \(cells.count) columns, not 4") }
        var devices = try BinaryArray(cells[0].bytes)
        var names = try BinaryArray(cells[1].bytes)
        var times = try BinaryArray(cells[2].bytes)
        var ids = try BinaryArray(cells[3].bytes)
        guard devices.count == times.count, names.count == times.count, ids.count == times.count else {
          throw StoreError.unavailable("step events: arrays of unequal length")
        }
        for _ in 0..<times.count {
          let (device, name, time) = (try devices.nextText(), try names.nextText(), try times.nextInt64())
          try ids.nextBytes { id in columns.append(device: device, name: name, time: time, id: id) }
        }
      }
      return columns
    }
  }

  /// `arguments` as PostgreSQL's bindings, in order.
  static func bindings(_ arguments: [SQLValue]) -> PostgresBindings {
    var binds = PostgresBindings()
    for argument in arguments {
      switch argument {
      case .int(let number): binds.append(number)
      case .double(let number): binds.append(number)
      case .text(let text): binds.append(text)
      case .null: binds.appendNull()
      }
    }
    return binds
  }
}

/// A one-dimensional PostgreSQL array in its binary form, its elements read in order, in place: a
/// header (dimensions, a null flag, the element type), each dimension's length and lower bound, then
/// each element as its length (−1 for `NULL`) and its bytes.
struct BinaryArray {
  private var buffer: ByteBuffer
  /// The number of elements.
  let count: Int

  /// The array in `bytes`; `nil` (an aggregate of no rows) is an empty array.
  init(_ bytes: ByteBuffer?) throws {
    guard var buffer = bytes else {
      (self.buffer, count) = (ByteBuffer(), 0)
      return
    }
    guard let dimensions = buffer.readInteger(as: Int32.self), buffer.readInteger(as: Int32.self) != nil,
      buffer.readInteger(as: UInt32.self) != nil, dimensions <= 1
    else { throw StoreError.unavailable("step events: not a one-dimensional array") }
    if dimensions == 0 {
      count = 0
    } else {
      guard let length = buffer.readInteger(as: Int32.self), length >= 0, buffer.readInteger(as: Int32.self) != nil
      else { throw StoreError.unavailable("step events: an array without its length") }
      count = Int(length)
    }
    self.buffer = buffer
  }

  /// The next element's bytes handed to `body` (empty for `NULL`).
  mutating func nextBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
    guard let length = buffer.readInteger(as: Int32.self), length >= -1, length <= buffer.readableBytes else {
      throw StoreError.unavailable("step events: an array element past the array's end")
    }
    guard length > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    defer { buffer.moveReaderIndex(forwardBy: Int(length)) }
    return try buffer.withUnsafeReadableBytes { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(length)))) }
  }

  /// The next element as text (UTF-8; empty for `NULL`).
  mutating func nextText() throws -> String {
    try nextBytes { String(decoding: $0, as: UTF8.self) }
  }

  /// The next element as a `bigint` (0 for `NULL`).
  mutating func nextInt64() throws -> Int64 {
    try nextBytes { bytes in
      guard bytes.count == 8 else {
        if bytes.isEmpty { return 0 }
        throw StoreError.unavailable("step events: a time of \(bytes.count) bytes, not a bigint's 8")
      }
      return Int64(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)))
    }
  }
}
