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
/// whose counts the copies inflated (``reconcileRollups(months:)``). For the events it inserted it
/// reads only the parts made since its lookup (``eventParts()``): ids that do not sort by time
/// fall in every granule of their day, and reading the day for them cost as much as the lookup.
/// So once every write has answered, every event is stored once and reports read the
/// tables as they are; a report running while two writes race can see a duplicate for that moment,
/// as it can see half of a batch.
extension ClickHouseEventStore {
  /// The active parts of the events table on each server, in ``servers``' order. A write takes them
  /// before it looks its events up: a copy of an event it then inserts can only lie in a part that is
  /// not among them (a copy in one of them would have been found by the lookup), so the check for
  /// copies of its fresh events reads the newer parts alone, not the whole of their days.
  package func eventParts() async throws -> [Set<String>] {
    let table = schema.local("events").split(separator: ".").last.map(String.init) ?? "events"
    var parts: [Set<String>] = []
    for server in servers {
      let rows = try await server.rows(
        "SELECT name FROM system.parts WHERE database = \(ClickHouseSQL.literal(schema.database)) "
          + "AND table = \(ClickHouseSQL.literal(table)) AND active")
      parts.append(Set(rows.compactMap { $0["name"].text }))
    }
    return parts
  }

  /// Merges away every duplicate row of `events` (and of their orders and items); throws
  /// ``StoreError/unavailable(_:)`` when some remain after five rounds (a merge the server would not
  /// start), so the write is not acknowledged and its retry runs this again.
  ///
  /// With `partsBefore` (``eventParts()`` taken before the write's lookup) and `found` (the events the
  /// lookup found stored, as `app` NUL `event id`), the events the write inserted are looked for in
  /// the parts made since on each server, and the ones it found stored everywhere in their days (a
  /// write that failed after inserting them may have raced another). Without them, every event is
  /// looked for everywhere in its days.
  package func removeDuplicates(
    of events: [StoredEvent], found: Set<ExactText> = [], partsBefore: [Set<String>]? = nil
  ) async throws {
    for (app, group) in Self.byApp(events) {
      let scope = "app = \(ClickHouseSQL.literal(app)) AND day IN (\(ClickHouseSchema.days(group.map(\.occurredAt)))) "
      let ids = Set(group.map { ExactText($0.eventID) })
      let old = partsBefore == nil ? ids : ids.filter { found.contains(ExactText("\(app)\u{0}\($0.text)")) }
      // Only purchases and refunds have commerce facts: the facts' tables are looked at for those
      // events alone, and not at all when the batch has none.
      let commerce = Set(group.lazy.filter { CommerceVocabulary.isOrder($0.name) }.map { ExactText($0.eventID) })
      var merged: Set<Int64> = []
      let inserted = ids.subtracting(old)
      for round in 0..<5 {
        var duplicated = try await partitionsWithDuplicates(
          events: old.isEmpty ? nil : (scope, old), facts: commerce.isEmpty ? nil : (scope, commerce))
        if let partsBefore, !inserted.isEmpty {
          duplicated.formUnion(try await partitionsWithDuplicates(scope, inserted, notIn: partsBefore))
        }
        if duplicated.isEmpty { break }
        guard round < 4 else {
          throw StoreError.unavailable("ClickHouse still holds duplicate rows of this batch after merging; retry")
        }
        if round > 0 { try? await Task.sleep(for: .milliseconds(100 * round)) }
        for partition in duplicated.sorted(by: { ($0.table, $0.month) < ($1.table, $1.month) }) {
          for server in servers {
            try await server.execute(
              "OPTIMIZE TABLE \(schema.local(partition.table)) PARTITION \(partition.month) FINAL")
          }
          if partition.table == "events" { merged.insert(partition.month) }
        }
      }
      // The rollups counted every copy, this batch's and any other the merges removed. The events
      // are exact now, and that is what the write acknowledges: a repair that cannot settle while
      // other writes fill the same hours is left to the next reconciliation (``reconcile()``).
      if !merged.isEmpty { _ = try? await reconcileRollups(months: merged) }
    }
  }

  /// A table and a month partition (`yyyymm`) holding a row more than once.
  private struct Duplicated: Hashable {
    let table: String
    let month: Int64
  }

  /// The partitions holding a row more than once: an event matching a scope whose id is among its
  /// ids, or an order or item of those of `facts` (each not looked at when `nil`). The ids go with the
  /// query as external tables (``ClickHouseClient/ExternalTable``).
  private func partitionsWithDuplicates(
    events: (scope: String, ids: Set<ExactText>)?, facts: (scope: String, ids: Set<ExactText>)?
  ) async throws -> Set<Duplicated> {
    var keyed: [(String, String, String)] = []
    var tables: [ClickHouseClient.ExternalTable] = []
    if let events {
      keyed.append(("events", "name, event_id", events.scope + "AND event_id IN event_ids"))
      tables.append(.init("event_ids", events.ids.map(\.text)))
    }
    if let facts {
      let condition = facts.scope + "AND event_id IN fact_ids"
      keyed += [("orders", "event_id", condition), ("items", "event_id, position", condition)]
      tables.append(.init("fact_ids", facts.ids.map(\.text)))
    }
    if keyed.isEmpty { return [] }
    let queries = keyed.map { table, key, condition in
      "SELECT '\(table)' AS t, toInt64(toYYYYMM(day)) AS m FROM \(schema.table(table)) WHERE \(condition) "
        + "GROUP BY day, \(key) HAVING count() > 1"
    }
    return try await partitions(
      client.rows(
        "SELECT t, m FROM (\(queries.joined(separator: " UNION ALL "))) GROUP BY t, m ORDER BY t, m", tables: tables))
  }

  /// The month partitions of events matching `scope` with an id among `ids` stored more than once
  /// on some server, read from each server's parts that are not among its `notIn` (a copy of an event
  /// lies on one shard, with the original: events are sharded by device).
  private func partitionsWithDuplicates(_ scope: String, _ ids: Set<ExactText>, notIn: [Set<String>]) async throws
    -> Set<Duplicated>
  {
    var found: Set<Duplicated> = []
    for (server, before) in zip(servers, notIn) {
      let parts = before.isEmpty ? "" : "AND _part NOT IN parts "
      found.formUnion(
        try await partitions(
          server.rows(
            "SELECT 'events' AS t, toInt64(toYYYYMM(day)) AS m FROM \(schema.local("events")) "
              + "WHERE \(scope)AND event_id IN ids \(parts)GROUP BY day, name, event_id HAVING count() > 1",
            tables: [.init("ids", ids.map(\.text))] + (before.isEmpty ? [] : [.init("parts", before)]))))
    }
    return found
  }

  private func partitions(_ rows: [SQLRow]) -> Set<Duplicated> {
    Set(
      rows.compactMap { row in
        row["t"].text.flatMap { table in row["m"].int.map { Duplicated(table: table, month: $0) } }
      })
  }
}
