import CollectorStore
import Logging
import PostgresNIO

extension PostgresTables {
  /// Series counters (``CounterSeries``) resolved against their stored rows, each series locked for
  /// the transaction (two collectors resolving one series wait for each other).
  func resolvedCounters(_ counters: [StoredCounter], on connection: PostgresConnection, logger: Logger) async throws
    -> ([StoredCounter], Int)
  {
    var stored: [String: [CounterSeries.Row]] = [:]
    for counter in counters where counter.isSeries && stored[CounterSeries.key(counter)] == nil {
      let key = CounterSeries.key(counter)
      let (lower, upper) = CounterSeries.bounds(counter.counterID)
      let lock = try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(key), 0))", logger: logger)
      for try await _ in lock {}
      let rows = try await connection.query(
        PostgresQuery(
          unsafeSQL: "SELECT counter_id, count FROM \(self.counters) WHERE app = $1 "
            + "AND (counter_id = $2 OR (counter_id > $3 AND counter_id < $4))",
          binds: Self.bindings([counter.app, counter.counterID, lower, upper])),
        logger: logger)
      var found: [CounterSeries.Row] = []
      for try await (id, count) in rows.decode((String, Int64).self) { found.append(.init(id: id, count: count)) }
      stored[key] = found
    }
    return CounterSeries.resolve(counters, stored: stored)
  }

  /// One row per counter id, the largest count (what keep-the-larger would leave), in first-seen
  /// order: PostgreSQL refuses an upsert that touches one row twice.
  static func largestPerID(_ counters: [StoredCounter]) -> [StoredCounter] {
    var position: [String: Int] = [:]
    var result: [StoredCounter] = []
    for counter in counters {
      let key = CounterSeries.key(counter)
      if let index = position[key] {
        if counter.count > result[index].count { result[index] = counter }
      } else {
        position[key] = result.count
        result.append(counter)
      }
    }
    return result
  }

  private static func bindings(_ values: [String]) -> PostgresBindings {
    var binds = PostgresBindings()
    for value in values { binds.append(value) }
    return binds
  }
}
