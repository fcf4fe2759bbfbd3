public import Delivery

/// The record layout shared by services whose requests carry one context for many events (the
/// collector's batch, the SimpleAnalytics payload): a prefix that names the context, then the body.
///
/// The prefix has two forms:
/// - **inline** `[UInt16 length][context]`: the record is self-contained;
/// - **reference** `[0xFF 0xFF][UInt64 hash]` (little-endian): the context is stored once in
///   ``RecordContexts`` and looked up there, so a record does not repeat it.
///
/// Either way events tracked before an app update are still sent with the old context after a
/// restart, and ``batchLength(_:)`` cuts batches where the prefix changes.
public enum RecordFraming {
  /// The length field that marks the reference form (no inline context is that long).
  static let referenceMarker: UInt16 = 0xFFFF
  /// The longest context stored inline.
  public static let maximumInlineContext = Int(referenceMarker) - 1

  /// `context` and `body` as one record with the context inline.
  public static func frame(context: [UInt8], body: [UInt8]) -> [UInt8] {
    frame(prefix: inlinePrefix(context), body: body)
  }

  /// `prefix` (from ``inlinePrefix(_:)``, ``referencePrefix(_:)`` or
  /// ``RecordContexts/prefix(for:)``) and `body` as one record.
  public static func frame(prefix: [UInt8], body: [UInt8]) -> [UInt8] {
    var record: [UInt8] = []
    record.reserveCapacity(prefix.count + body.count)
    record += prefix
    record += body
    return record
  }

  /// The inline prefix: the context's length, then the context (cut to ``maximumInlineContext``).
  public static func inlinePrefix(_ context: [UInt8]) -> [UInt8] {
    let count = min(context.count, maximumInlineContext)
    return [UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: count >> 8)] + context.prefix(count)
  }

  /// The reference prefix for the stored context with this hash.
  public static func referencePrefix(_ hash: UInt64) -> [UInt8] {
    [0xFF, 0xFF] + withUnsafeBytes(of: hash.littleEndian) { Array($0) }
  }

  /// The hash of the stored context `record` references; `nil` for an inline context.
  public static func reference(_ record: [UInt8]) -> UInt64? {
    guard record.count >= 10, record[0] == 0xFF, record[1] == 0xFF else { return nil }
    return (0..<8).reduce(UInt64(0)) { $0 | UInt64(record[2 + $1]) << (8 * UInt64($1)) }
  }

  /// The bytes of the record's prefix (length and context, or marker and hash).
  public static func prefixLength(_ record: [UInt8]) -> Int {
    guard record.count >= 2 else { return record.count }
    let length = UInt16(record[0]) | UInt16(record[1]) << 8
    return min(record.count, length == referenceMarker ? 10 : 2 + Int(length))
  }

  /// The record's inline context (empty for a reference: resolve it with
  /// ``RecordContexts/context(of:)``).
  public static func context(_ record: [UInt8]) -> ArraySlice<UInt8> {
    guard reference(record) == nil else { return [] }
    return record[min(2, record.count)..<prefixLength(record)]
  }

  /// The record's body.
  public static func body(_ record: [UInt8]) -> ArraySlice<UInt8> { record[prefixLength(record)...] }

  /// How many leading records share the first one's context (a batch never mixes contexts).
  public static func batchLength(_ records: ArraySlice<OutboxRecord>) -> Int {
    guard let first = records.first else { return 0 }
    let prefix = first.payload.prefix(prefixLength(first.payload))
    return records.prefix { $0.payload.starts(with: prefix) }.count
  }
}
