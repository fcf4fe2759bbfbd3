package import CollectorStore

/// Exact counts without `FINAL`.
///
/// A `ReplacingMergeTree` removes rows with the same sort key only when it merges their parts, so
/// an event two collectors inserted at the same instant (each looked it up before the other's insert
/// landed) is stored twice until a merge. Reading with `FINAL` hides that, but costs 2.5–4× on every
/// report (ClickHouse 18.16 merges at read time). Instead, a write makes sure it leaves no
/// duplicate behind: after its inserts it looks for rows of its events stored more than once
/// (the events, and the orders and items of its purchases and refunds, through their sort keys)
/// and, in the rare case it finds some, merges the month partitions holding them (`OPTIMIZE …
/// PARTITION … FINAL`, on every server) before it answers, and then rebuilds the rollup hours
/// whose counts the copies inflated (``reconcileRollups(months:)``).
/// So once every write has answered, every event is stored once and reports read the
/// tables as they are; a report running while two writes race can see a duplicate for that moment,
/// as it can see half of a batch.
extension ClickHouseEventStore {
  /// Merges away every duplicate row of `events` (and of their orders and items); throws
  /// ``StoreError/unavailable(_:)`` when some remain after five rounds (a merge the server would not
  /// start), so the write is not acknowledged and its retry runs this again.
  package func removeDuplicates(of events: [StoredEvent]) async throws {
    for (app, group) in Dictionary(grouping: events, by: \.app).sorted(by: { $0.key < $1.key }) {
      let scope = "app = \(ClickHouseSQL.literal(app)) AND day IN (\(ClickHouseSchema.days(group.map(\.occurredAt)))) "
      // Only purchases and refunds have commerce facts: the facts' tables are looked at for those
      // events alone, and not at all when the batch has none.
      let commerce = Set(group.lazy.filter { CommerceVocabulary.isOrder($0.name) }.map(\.eventID))
      var merged: Set<Int64> = []
      for round in 0..<5 {
        let duplicated = try await partitionsWithDuplicates(
          events: scope + "AND event_id IN \(ClickHouseSQL.list(Set(group.map(\.eventID))))",
          facts: commerce.isEmpty ? nil : scope + "AND event_id IN \(ClickHouseSQL.list(commerce))")
        if duplicated.isEmpty { break }
        guard round < 4 else {
          throw StoreError.unavailable("ClickHouse still holds duplicate rows of this batch after merging; retry")
        }
        if round > 0 { try? await Task.sleep(for: .milliseconds(100 * round)) }
        for (table, month) in duplicated {
          for server in servers {
            try await server.execute("OPTIMIZE TABLE \(schema.local(table)) PARTITION \(month) FINAL")
          }
          if table == "events" { merged.insert(month) }
        }
      }
      // The rollups counted every copy, this batch's and any other the merges removed. The events
      // are exact now, and that is what the write acknowledges: a repair that cannot settle while
      // other writes fill the same hours is left to the next reconciliation (``reconcile()``).
      if !merged.isEmpty { _ = try? await reconcileRollups(months: merged) }
    }
  }

  /// The tables and month partitions (`yyyymm`) holding a row more than once: an event of the
  /// events matching `events`, or an order or item of those matching `facts` (none when `nil`).
  private func partitionsWithDuplicates(events: String, facts: String?) async throws
    -> [(table: String, month: Int64)]
  {
    var keyed = [("events", "event_id", events)]
    if let facts { keyed += [("orders", "event_id", facts), ("items", "event_id, position", facts)] }
    let queries = keyed.map { table, key, condition in
      "SELECT '\(table)' AS t, toInt64(toYYYYMM(day)) AS m FROM \(schema.table(table)) WHERE \(condition) "
        + "GROUP BY day, \(key) HAVING count() > 1"
    }
    let rows = try await client.rows(
      "SELECT t, m FROM (\(queries.joined(separator: " UNION ALL "))) GROUP BY t, m ORDER BY t, m")
    return rows.compactMap { row in row["t"].text.flatMap { table in row["m"].int.map { (table, $0) } } }
  }
}
