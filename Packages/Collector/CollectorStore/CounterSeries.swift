/// Counter totals that carry no id of their own (SimpleAnalytics): how a report is told apart from a
/// resend without ever merging two real totals.
///
/// The client sends the count since its last successful submit with the time of the first count,
/// to the second. After a failure (or a lost reply) it keeps counting and resends: same first-count
/// time, a larger or equal count. After a success it starts again, and the next first count may fall
/// in the same second. So the reports of one counter of one device in one second form a *series*
/// (base id `K`), stored as rows `K`, `K#1`, `K#2`, …, and a report of `count`:
/// - equal to a stored row of the series is a replay (identical bytes, or a resend that counted
///   nothing more): nothing is stored;
/// - larger than the newest row is that row's resend with a grown total: the newest row takes it;
/// - smaller than the newest row cannot be its resend (resends never shrink): a new total, a new row.
///
/// Proven cases (`StoreConformance`): two sends within one second (3, then 2: 5 stored); a lost reply
/// then a resend with a grown total (3, then 5: 5); a replay of identical bytes (3, 3: 3). The one
/// case no server can tell apart: a new total in the same second that is larger than the one just
/// acknowledged (3 acknowledged, then a new 5 in the same second) reads as a resend (5, not 8).
public enum CounterSeries {
  /// One stored row of a series.
  public struct Row: Sendable, Hashable {
    /// The row's counter id.
    public var id: String
    /// Its count.
    public var count: Int64

    /// A row.
    public init(id: String, count: Int64) {
      self.id = id
      self.count = count
    }
  }

  /// The id of the `index`-th row of the series `base` (the first row keeps the base id itself, so
  /// totals stored before series existed are recognised).
  public static func id(_ base: String, index: Int) -> String { index == 0 ? base : "\(base)#\(index)" }

  /// Bounds that select the rows after the first of a series by counter id: `id > lower AND id < upper`.
  public static func bounds(_ base: String) -> (lower: String, upper: String) { (base + "#", base + "$") }

  /// The key of `counter`'s series (in the `stored` dictionary of ``resolve(_:stored:)``, and for a
  /// lock): its app and base id, unambiguously (`<app bytes>:<app><id>`), text any engine can hold.
  public static func key(_ counter: StoredCounter) -> String {
    "\(counter.app.utf8.count):\(counter.app)\(counter.counterID)"
  }

  /// The rows to write for `counters` given the stored rows of each series (by ``key(_:)``), and how
  /// many reports were replays. Counters that are not series pass through unchanged. Written with a
  /// keep-the-larger upsert, the rows carry out the rule above.
  public static func resolve(_ counters: [StoredCounter], stored: [String: [Row]]) -> (
    rows: [StoredCounter], replays: Int
  ) {
    var series = stored
    var rows: [StoredCounter] = []
    var replays = 0
    for counter in counters {
      guard counter.isSeries else {
        rows.append(counter)
        continue
      }
      let base = counter.counterID
      var existing = series[key(counter)] ?? []
      if existing.contains(where: { $0.count == counter.count }) {
        replays += 1
        continue
      }
      var row = counter
      let newest = existing.max { index(of: $0.id, base: base) < index(of: $1.id, base: base) }
      if let newest, counter.count > newest.count {
        row.counterID = newest.id
        existing.removeAll { $0.id == newest.id }
      } else {
        row.counterID = id(base, index: newest.map { index(of: $0.id, base: base) + 1 } ?? 0)
      }
      existing.append(Row(id: row.counterID, count: row.count))
      series[key(counter)] = existing
      rows.append(row)
    }
    return (rows, replays)
  }

  private static func index(of id: String, base: String) -> Int {
    id == base ? 0 : Int(id.dropFirst(base.count + 1)) ?? 0
  }
}
