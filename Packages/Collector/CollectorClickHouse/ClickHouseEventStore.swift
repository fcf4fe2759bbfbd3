public import AsyncHTTPClient
public import CollectorStore
public import Foundation
import NIOCore

/// The ClickHouse engine: events in a `ReplacingMergeTree` over ClickHouse's HTTP interface.
///
/// ClickHouse has no transactions. What ``write(_:)`` guarantees instead:
/// - It returns only after ClickHouse acknowledged the `INSERT`: the rows are in a new data part on
///   the server's disk (written through the page cache; ClickHouse 18.16 does not `fsync` a part
///   before answering, so a power loss of the server can lose the last acknowledged inserts, a crash
///   of the server process cannot). One batch is one `INSERT` per table, and an `INSERT` of one
///   block is atomic: all of its rows or none.
/// - Events already stored under (app, event id) are skipped and counted as duplicates (looked up
///   before the insert through the hashed ids and the sort key). Two collectors inserting the same
///   event at the same instant can both store it; before answering, a write merges away any
///   duplicate of its events (see `removeDuplicates(of:)`), so reports read the tables without
///   `FINAL` and stay exact across retries, restarts and several collectors.
/// - Counter totals keep the largest count (`ReplacingMergeTree(count)`), read with `FINAL`.
public final class ClickHouseEventStore: EventStore {
  /// The server reads and inserts go to.
  let client: ClickHouseClient
  /// Every server of the cluster (just ``client`` on one server): schema changes and deletions run
  /// on each.
  let servers: [ClickHouseClient]
  let schema: ClickHouseSchema

  /// The address of the server reads and inserts go to.
  public var url: URL { client.url }

  /// The database the store's tables are in.
  public var database: String { schema.database }

  /// A store in `database` on the server at `url` (`http://127.0.0.1:8123`; a user and password may
  /// be given in it), through `http` (by default ``ClickHouseClient/http``, process-wide, which never
  /// needs shutting down).
  ///
  /// On a cluster, `cluster` names it (as the servers' `remote_servers` configuration does) and
  /// `shardURLs` are the HTTP addresses of its servers: the store creates its tables on each (a
  /// local table and a `Distributed` table over the cluster) and deletes on each, and reads and
  /// inserts through `url`. Throws ``StoreError/unavailable(_:)`` for a URL or name that cannot be
  /// used; nothing is contacted until the first call.
  public init(
    url: String, database: String = "coretracker", cluster: String? = nil, shardURLs: [String] = [],
    http: HTTPClient? = nil
  ) throws {
    let http = http ?? ClickHouseClient.http
    func server(_ text: String) throws -> ClickHouseClient {
      guard let parsed = URL(string: text) else { throw StoreError.unavailable("ClickHouse URL \(text) is invalid") }
      return try ClickHouseClient(url: parsed, database: database, http: http)
    }
    client = try server(url)
    if let cluster {
      guard ClickHouseSQL.isValidIdentifier(cluster) else {
        throw StoreError.unavailable("ClickHouse cluster \"\(cluster)\" is not a plain identifier ([a-z_][a-z0-9_]*)")
      }
      guard !shardURLs.isEmpty else {
        throw StoreError.unavailable("ClickHouse cluster \(cluster) needs the HTTP URL of every shard")
      }
      var seen: Set<String> = []
      servers = try ([url] + shardURLs).filter { seen.insert($0).inserted }.map(server)
    } else {
      servers = [client]
    }
    schema = ClickHouseSchema(database: database, cluster: cluster)
  }

  /// Several collectors insert at once; ClickHouse wants few large inserts, which the group
  /// committer makes.
  public var maximumConcurrentWrites: Int { 4 }

  /// ClickHouse makes a data part of every insert and merges parts in the background: while
  /// requests keep coming, an insert gathers at least 1,000 rows or is made after its oldest row
  /// waited 1 s; 50 ms without a new request ends the wait.
  public var commitGathering: CommitGathering {
    CommitGathering(rows: 1_000, wait: .seconds(1), quiet: .milliseconds(50))
  }

  public func migrate() async throws { try await migrate(through: schema.migrations.count) }

  /// Runs the migrations up to `version` (tests start older stores with it), then adds the declared
  /// columns the tables lack. A migration's statement may take as long as its data needs (copying
  /// 100M events takes minutes, where a statement's usual limit is 120 s); a failure names the
  /// migration, which runs again from its start at the next start.
  package func migrate(through version: Int) async throws {
    for var server in servers {
      server.timeout = .hours(24)
      for statement in schema.bootstrap { try await server.execute(statement) }
      let applied = try await Self.version(server, schema)
      if applied > schema.migrations.count {
        throw StoreError.schemaTooNew(found: applied, known: schema.migrations.count)
      }
      for (index, statements) in schema.migrations.enumerated().prefix(version) where index >= applied {
        do {
          for statement in statements { try await server.execute(statement) }
        } catch {
          throw StoreError.unavailable(
            "ClickHouse migration \(index + 1) of \(schema.database) at \(server.url.absoluteString) failed "
              + "(it runs again at the next start): \(error)")
        }
        try await server.execute("INSERT INTO \(schema.migrationsTable) (version) VALUES (\(index + 1))")
      }
      try await addContextColumns(server)
    }
  }

  /// Adds the context columns (and the event key) the server's tables lack; another instance adding
  /// one at the same time is no failure.
  private func addContextColumns(_ server: ClickHouseClient) async throws {
    func present() async throws -> [String: Set<String>] {
      let rows = try await server.rows(schema.contextColumnsQuery)
      return Dictionary(grouping: rows, by: { $0["table"].text ?? "" }).mapValues {
        Set($0.compactMap { $0["name"].text })
      }
    }
    for statement in schema.columnAdditions(present: try await present()) {
      do {
        try await server.execute(statement)
      } catch {
        guard !schema.columnAdditions(present: try await present()).contains(statement) else { throw error }
      }
    }
  }

  public var knownSchemaVersion: Int { schema.migrations.count }

  public func schemaVersion() async throws -> Int {
    var lowest = Int.max
    for server in servers { lowest = min(lowest, try await Self.version(server, schema)) }
    return lowest
  }

  private static func version(_ server: ClickHouseClient, _ schema: ClickHouseSchema) async throws -> Int {
    let rows = try await server.rows("SELECT toInt64(max(version)) AS v FROM \(schema.migrationsTable)")
    return Int(rows.first?["v"].int ?? 0)
  }

  public func write(_ batch: StoreBatch) async throws -> WriteSummary {
    var summary = WriteSummary()
    if !batch.events.isEmpty {
      var found: Set<ExactText> = []
      var fresh: [StoredEvent] = []
      // Before the lookup: any copy of an event inserted below lies in a part not among these.
      let partsBefore = try await eventParts()
      for (app, events) in Self.byApp(batch.events) {
        let stored = try await storedEventIDs(app: app, among: events.map(\.eventID), days: events.map(\.occurredAt))
        found.formUnion(stored.map { ExactText("\(app)\u{0}\($0.text)") })
        fresh = fresh.isEmpty ? Self.fresh(events, stored: stored) : fresh + Self.fresh(events, stored: stored)
      }
      if !fresh.isEmpty {
        let facts = ClickHouseFacts(fresh)
        // As the other engines' JSON checks do: a batch with parameters that are not a JSON object
        // stores nothing.
        if let event = facts.notObjects.first {
          throw StoreError.unavailable("event \(event): parameters are not a JSON object")
        }
        // The facts first: an insert that fails after them is retried by the client, and the
        // facts it writes again are merged away by `removeDuplicates` before it answers.
        let derived: [(String, [[String: Any]])] = [
          (schema.orders, facts.orders), (schema.items, facts.items), (schema.persons, facts.persons),
        ]
        for (table, rows) in derived where !rows.isEmpty {
          try await insert(into: table, ClickHouseRows.columns(rows), ClickHouseRows.body(rows))
        }
        try await insert(
          into: schema.events, ClickHouseRows.insertedEventColumns, ClickHouseRows.body(facts),
          format: ClickHouseTabSeparated.format)
      }
      // Every event of the batch, not only the fresh ones: a retry of a write that failed here
      // finds its events stored and must still leave no duplicate behind.
      try await removeDuplicates(of: batch.events, found: found, partsBefore: partsBefore)
      summary.insertedEvents = fresh.count
      summary.duplicateEvents = batch.events.count - fresh.count
    }
    if !batch.counters.isEmpty {
      let larger = try await largerThanStored(batch.counters)
      if !larger.isEmpty {
        try await insert(
          into: schema.counters, ClickHouseRows.counterColumns, ClickHouseRows.body(larger),
          format: ClickHouseTabSeparated.format)
      }
      summary.insertedCounters = larger.count
      summary.duplicateCounters = batch.counters.count - larger.count
    }
    try await insertQuarantine(batch)
    try await insertClientDrops(batch)
    return summary
  }

  /// The events of one app's `events` not among `stored` ids, each id once. The apps' groups are
  /// apart: an id is seen again only within its app's. Ids are told apart by their bytes, as the
  /// events table keeps them (``ExactText``).
  static func fresh(_ events: [StoredEvent], stored: Set<ExactText>) -> [StoredEvent] {
    var seen = Set<ExactText>(minimumCapacity: events.count)
    let kept = events.map { event in
      let id = ExactText(event.eventID)
      return !stored.contains(id) && seen.insert(id).inserted
    }
    // Nearly always every event is new: the events are then taken as they are, uncopied.
    return kept.allSatisfy { $0 } ? events : zip(events, kept).filter(\.1).map(\.0)
  }

  /// `events` grouped by app, apps in order: a batch of one app (nearly every batch) as it is,
  /// without grouping it again.
  static func byApp(_ events: [StoredEvent]) -> [(app: String, events: [StoredEvent])] {
    guard let app = events.first?.app else { return [] }
    if events.indices.allSatisfy({ events[$0].app == app }) { return [(app, events)] }
    return Dictionary(grouping: events, by: \.app).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }

  /// One `INSERT` of `body`, rows in `format` (`JSONEachRow` lines unless told); through a
  /// `Distributed` table it answers only once every shard wrote its rows (`insert_distributed_sync`).
  func insert(into table: String, _ columns: String, _ body: ByteBuffer, format: String = "JSONEachRow") async throws {
    try await client.execute(
      "INSERT INTO \(table) (\(columns)) FORMAT \(format)", body: body, settings: ["insert_distributed_sync": "1"])
  }

  /// The rows of `counters` (the largest per id) whose count is larger than the one stored.
  private func largerThanStored(_ counters: [StoredCounter]) async throws -> [StoredCounter] {
    var largest: [String: StoredCounter] = [:]
    for counter in counters {
      let key = "\(counter.app)\u{0}\(counter.counterID)"
      if let kept = largest[key], kept.count >= counter.count { continue }
      largest[key] = counter
    }
    var result: [StoredCounter] = []
    for (app, rows) in Dictionary(grouping: largest.values, by: \.app).sorted(by: { $0.key < $1.key }) {
      let stored = try await client.rows(
        "SELECT counter_id, max(count) AS count FROM \(schema.counters) WHERE app = \(ClickHouseSQL.literal(app)) "
          + "AND counter_id IN \(ClickHouseSQL.list(rows.map(\.counterID))) GROUP BY counter_id")
      var counts: [String: Int64] = [:]
      for row in stored { counts[row["counter_id"].text ?? ""] = row["count"].int ?? 0 }
      result += rows.filter { row in counts[row.counterID].map { row.count > $0 } ?? true }
        .sorted { $0.counterID < $1.counterID }
    }
    return result
  }

  public func ping() async throws { _ = try await client.rows("SELECT 1 AS one") }

  public func eventCount(app: String?) async throws -> Int {
    let filter = app.map { " WHERE app = \(ClickHouseSQL.literal($0))" } ?? ""
    let rows = try await client.rows("SELECT toInt64(count()) AS n FROM \(schema.events) FINAL\(filter)")
    return Int(rows.first?["n"].int ?? 0)
  }

  public func events(app: String, limit: Int) async throws -> [StoredEvent] {
    try await client.rows(
      "SELECT \(ClickHouseRows.eventColumns) FROM \(schema.events) FINAL WHERE app = \(ClickHouseSQL.literal(app)) "
        + "ORDER BY occurred_at, event_id LIMIT \(max(0, limit))"
    ).map(ClickHouseRows.event)
  }

  public func storedEventIDs(app: String, among ids: [String]) async throws -> Set<ExactText> {
    try await storedEventIDs(app: app, among: ids, days: nil)
  }

  /// Which of `ids` are stored for `app`; `days` (event times in ms), when known, narrow the lookup
  /// to those days of the sort key. Each server's local events are read by their hashed ids first
  /// (``ClickHouseSchema/eventKey``), the ids themselves only where a hash matches.
  private func storedEventIDs(app: String, among ids: [String], days: [Int64]?) async throws -> Set<ExactText> {
    if ids.isEmpty { return [] }
    let unique = ClickHouseClient.ExternalTable("ids", Set(ids.map { ExactText($0) }).map(\.text))
    var condition = "app = \(ClickHouseSQL.literal(app)) AND event_id IN ids"
    if let days {
      condition += " AND day IN (\(ClickHouseSchema.days(days)))"
    }
    var stored: Set<ExactText> = []
    for server in servers {
      let rows = try await server.rows(
        "SELECT DISTINCT event_id FROM \(schema.local("events")) "
          + "PREWHERE \(ClickHouseSchema.eventKey) IN (SELECT cityHash64(value) FROM ids) WHERE \(condition)",
        tables: [unique])
      stored.formUnion(rows.compactMap { $0["event_id"].text.map { ExactText($0) } })
    }
    return stored
  }

  public func counters(app: String) async throws -> [StoredCounter] {
    try await client.rows(
      "SELECT \(ClickHouseRows.counterColumns) FROM \(schema.counters) FINAL WHERE app = \(ClickHouseSQL.literal(app)) "
        + "ORDER BY first_counted_at, device_id, name"
    ).map(ClickHouseRows.counter)
  }

  /// Nothing to release: connections belong to the `HTTPClient`.
  public func close() async throws {}
}
