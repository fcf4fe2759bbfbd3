public import CoreTracker
import Foundation

/// The record layout shared by services whose requests carry one context for many events (the
/// collector's batch, the SimpleAnalytics payload): `[UInt16 context length][context][body]`.
///
/// Storing the (cached, already encoded) context with every record keeps each record
/// self-contained in the outbox — events tracked before an app update are still sent with the old
/// version after a restart — and ``batchLength(_:)`` cuts batches where the context changes.
public enum RecordFraming {
  /// `context` and `body` as one record.
  public static func frame(context: [UInt8], body: [UInt8]) -> [UInt8] {
    var record: [UInt8] = []
    record.reserveCapacity(2 + context.count + body.count)
    record.append(UInt8(truncatingIfNeeded: context.count))
    record.append(UInt8(truncatingIfNeeded: context.count >> 8))
    record += context
    record += body
    return record
  }

  /// The bytes of the record's prefix that hold the length and the context.
  public static func prefixLength(_ record: [UInt8]) -> Int {
    guard record.count >= 2 else { return record.count }
    return min(record.count, 2 + Int(UInt16(record[0]) | UInt16(record[1]) << 8))
  }

  /// The record's context.
  public static func context(_ record: [UInt8]) -> ArraySlice<UInt8> {
    record[min(2, record.count)..<prefixLength(record)]
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

/// A counter increment as stored in an outbox record's body, and the totals a batch carries.
public struct CounterTotal: Sendable, Hashable, Codable {
  /// The counter's name.
  public var name: String
  /// The sum of the increments.
  public var count: Int64
  /// The first increment's time (ms since 1970).
  public var firstCountedAt: Int64
  /// The install that counted (totals are kept per name and install).
  public var anonymousId: String?
  /// A unique id of the first increment in this total: the collector's de-duplication key (a
  /// resent total, even one grown by later increments, replaces the stored one instead of adding).
  public var id: String?

  /// Creates a total.
  public init(name: String, count: Int64, firstCountedAt: Int64, anonymousId: String? = nil, id: String? = nil) {
    self.name = name
    self.count = count
    self.firstCountedAt = firstCountedAt
    self.anonymousId = anonymousId
    self.id = id
  }

  /// The body of one increment's record.
  public static func body(for increment: CounterIncrement) -> [UInt8] {
    let milliseconds = Int64((increment.timestamp.timeIntervalSince1970 * 1000).rounded())
    let total = CounterTotal(
      name: increment.name, count: Int64(increment.amount), firstCountedAt: milliseconds,
      anonymousId: increment.anonymousID, id: UUID().uuidString.lowercased()
    )
    return (try? JSONEncoder().encode(total)).map(Array.init) ?? []
  }

  /// The totals per name and install of the counter records among `records` (those of `kind`), in
  /// order of first appearance.
  public static func totals(of records: ArraySlice<OutboxRecord>, kind: UInt8) -> [CounterTotal] {
    var totals: [CounterTotal] = []
    var index: [CounterKey: Int] = [:]
    let decoder = JSONDecoder()
    for record in records where record.kind == kind {
      guard let increment = try? decoder.decode(CounterTotal.self, from: Data(RecordFraming.body(record.payload)))
      else { continue }
      let key = CounterKey(name: increment.name, anonymousId: increment.anonymousId)
      if let position = index[key] {
        totals[position].count += increment.count
        totals[position].firstCountedAt = min(totals[position].firstCountedAt, increment.firstCountedAt)
      } else {
        index[key] = totals.count
        totals.append(increment)
      }
    }
    return totals
  }

  private struct CounterKey: Hashable {
    var name: String
    var anonymousId: String?
  }
}
