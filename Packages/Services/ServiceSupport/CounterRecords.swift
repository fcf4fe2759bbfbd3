public import CollectorWire
public import CoreTracker
public import Delivery
import Foundation

/// Counter increments as outbox records, and the totals a batch carries: the native batch's
/// ``CollectorCounter`` is the one counter type, on the wire and in the outbox (SimpleAnalytics
/// maps the totals to its own shape when it sends).
extension CollectorCounter {
  /// The body of one increment's record: the increment as a total of one, with a unique id (the
  /// collector's de-duplication key: a resent total, even one grown by later increments, replaces
  /// the stored one instead of adding).
  public static func recordBody(for increment: CounterIncrement) -> [UInt8] {
    let milliseconds = Int64((increment.timestamp.timeIntervalSince1970 * 1000).rounded())
    let total = CollectorCounter(
      name: increment.name, count: Int64(increment.amount), firstCountedAt: milliseconds,
      anonymousId: increment.anonymousID, id: UUID().uuidString.lowercased()
    )
    return (try? JSONEncoder().encode(total)).map(Array.init) ?? []
  }

  /// The totals per name and install of the counter records among `records` (those of `kind`), in
  /// order of first appearance; each keeps its first increment's id and time.
  public static func totals(of records: ArraySlice<OutboxRecord>, kind: UInt8) -> [CollectorCounter] {
    var totals: [CollectorCounter] = []
    var index: [CounterKey: Int] = [:]
    let decoder = JSONDecoder()
    for record in records where record.kind == kind {
      guard
        let increment = try? decoder.decode(CollectorCounter.self, from: Data(RecordFraming.body(record.payload)))
      else { continue }
      let key = CounterKey(name: increment.name, anonymousId: increment.anonymousId)
      if let position = index[key] {
        totals[position].count =
          totals[position].count.addingReportingOverflow(increment.count).overflow
          ? .max : totals[position].count + increment.count
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
