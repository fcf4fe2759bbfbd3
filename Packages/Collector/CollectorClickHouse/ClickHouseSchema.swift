import CollectorReports
import CollectorWire

/// The ClickHouse schema of one database, and its migrations, on one server or on a cluster.
///
/// - `events`: `ReplacingMergeTree` ordered by (app, day, name, event id) (since migration 9,
///   ``eventsByNameMigration``) and partitioned by month: the tenant and the day lead the key (every
///   report reads one app over a range of days), the name lets a report on one event read only its
///   rows, and a row sent twice (a client retry that two collectors both stored) has the same key,
///   so merges keep one, and a write merges away the duplicates of its events before it answers
///   (`removeDuplicates(of:)`). Times are `Int64` ms since 1970 (UTC); `day` is derived from
///   `occurred_at` (a `DEFAULT`, not `MATERIALIZED`: 18.16 cannot insert through a `Distributed`
///   table into a table with a materialized column). Parameters are JSON text, and their top-level keys and values are kept as two
///   arrays (``ClickHouseFacts``). Hot context columns are columns. The local table alone holds
///   ``eventKey``, the id's hash (`MATERIALIZED`: the `Distributed` table, made before it, lacks it
///   and inserts through it as before).
/// - `orders` and `items`: the commerce facts of purchases and refunds (``ClickHouseFacts``), one row
///   per order and per counted item, ordered and partitioned like the events.
/// - `counters`: `ReplacingMergeTree(count)` by (app, counter id): merges keep the largest total.
/// - `keys`: `ReplacingMergeTree(version)` by id: revoking writes a newer version of the row.
/// - `sessions`: `ReplacingMergeTree(version)` by token hash; `audit`: a `MergeTree` by time.
/// - `activity` and `activity_names`: the hourly rollups, fed at insert by materialised views
///   (``rollups``).
/// - `closed_name_devices`, `closed_name_days`, `closed_records` and `closed_drops`: the closed days,
///   builds of the names rollup over whole UTC days that top events read (``closedDays``).
/// - `device_first`: when each device was first seen, fed at insert (``firstSeen``).
/// - `schema_migrations`: one row per applied migration (on every server).
///
/// On a cluster (``cluster`` set), each server keeps the rows in `<table>_local` and `<table>` is a
/// `Distributed` table over the cluster, sharded by a hash of the device id: one device's events,
/// facts and counters are on one shard, so a duplicate lies beside its original and
/// per-device questions (sessions, funnels, retention) are answered shard by shard. Reads and
/// inserts name `<table>`; schema changes and deletions run on every shard's `<table>_local`.
struct ClickHouseSchema: Sendable {
  let database: String
  /// The cluster of the `Distributed` tables (`remote_servers` in the servers' configuration), or
  /// `nil` for one server.
  let cluster: String?

  /// The table reads and inserts name.
  func table(_ name: String) -> String { "\(database).\(name)" }
  /// The table holding the rows on one server (what schema changes and deletions name).
  func local(_ name: String) -> String { cluster == nil ? table(name) : "\(database).\(name)_local" }

  var events: String { table("events") }
  var counters: String { table("counters") }
  var keys: String { table("keys") }
  var sessions: String { table("sessions") }
  var audit: String { table("audit") }
  var quarantine: String { table("quarantine") }
  var clientDrops: String { table("client_drops") }
  var savedViews: String { table("saved_views") }
  var annotations: String { table("annotations") }
  var submissions: String { table("submissions") }
  var orders: String { table("orders") }
  var persons: String { table("persons") }
  var items: String { table("items") }
  var migrationsTable: String { "\(database).schema_migrations" }

  /// The context columns of migration 1 (``ContextField``'s columns are added to them at every
  /// start, ``contextColumnAdditions(present:)``).
  static let context = """
    app_name String, app_version String, app_build String, os_name String, os_version String, platform String,
    device_model String, locale String, library String
    """

  /// The columns every commerce fact has: where and when its event happened.
  static let place = """
    app String, t Int64, device_id String, user_id Nullable(String), platform String, app_version String,
    os_version String, event_id String
    """

  /// The day of a time column in ms (UTC; times before 1970 fall on 1970-01-01).
  static func day(_ column: String) -> String { "toDate(toDateTime(intDiv(greatest(\(column), 0), 1000)))" }

  /// The distinct days of times in ms, as `Date` literals (`'2026-11-24'`) for `day IN (…)`: what
  /// ``day(_:)`` gives for each, computed here so a lookup names each day once.
  static func days(_ times: some Sequence<Int64>) -> String {
    let days = Set(times.map { max(0, $0) / 86_400_000 }).sorted()
    return days.map { "'\(ReportTime.iso($0 * 86_400_000).prefix(10))'" }.joined(separator: ", ")
  }

  /// Run first on every server.
  var bootstrap: [String] {
    [
      "CREATE DATABASE IF NOT EXISTS \(database)",
      """
      CREATE TABLE IF NOT EXISTS \(migrationsTable) (version UInt32, applied_at DateTime DEFAULT now())
      ENGINE = ReplacingMergeTree ORDER BY version
      """,
    ]
  }

  /// One table: its name, its columns, its engine clause and the key its rows are sharded by.
  struct Table {
    let name: String
    let columns: String
    let engine: String
    let shardBy: String
  }

  /// The tables of migration 1.
  static let tables = [
    Table(
      name: "events",
      columns: """
        app String, event_id String, name String, kind String, occurred_at Int64, utc_offset_minutes Int16,
        received_at Int64, device_id String, user_id Nullable(String), session_id Nullable(Int64),
        \(context), parameters String, param_keys Array(String), param_values Array(String),
        day Date DEFAULT \(day("occurred_at"))
        """,
      engine: "ReplacingMergeTree PARTITION BY toYYYYMM(day) ORDER BY (app, day, event_id)",
      shardBy: "cityHash64(device_id)"),
    Table(
      name: "orders",
      columns: """
        \(place), purchase UInt8, k String, currency String, value Float64, day Date DEFAULT \(day("t"))
        """,
      engine: "ReplacingMergeTree PARTITION BY toYYYYMM(day) ORDER BY (app, day, event_id)",
      shardBy: "cityHash64(device_id)"),
    Table(
      name: "items",
      columns: """
        \(place), position UInt32, k String, currency String, item String, name Nullable(String),
        category Nullable(String), brand Nullable(String), price Nullable(Float64), quantity Float64,
        day Date DEFAULT \(day("t"))
        """,
      engine: "ReplacingMergeTree PARTITION BY toYYYYMM(day) ORDER BY (app, day, event_id, position)",
      shardBy: "cityHash64(device_id)"),
    Table(
      name: "counters",
      columns: """
        app String, counter_id String, device_id String, name String, count Int64, first_counted_at Int64,
        received_at Int64, \(context)
        """,
      engine: "ReplacingMergeTree(count) ORDER BY (app, counter_id)",
      shardBy: "cityHash64(device_id)"),
    Table(
      name: "keys",
      columns: """
        id String, app String, scope String, hash String, created_at Int64, revoked_at Nullable(Int64), version UInt64
        """,
      engine: "ReplacingMergeTree(version) ORDER BY id",
      shardBy: "cityHash64(id)"),
  ]

  /// The device-to-person table of migration 2: a row per (device, user) first seen together in a
  /// write; a device's person is the user of its earliest row (`argMin` by time, then event id).
  /// Rows repeated by retries are identical, so the `ReplacingMergeTree` keyed by the whole row
  /// merges them away and `argMin` is exact either way. Sharded by device, as the events.
  static let persons = Table(
    name: "persons",
    columns: "app String, device_id String, person String, first_ms Int64, first_event String",
    engine: "ReplacingMergeTree ORDER BY (app, device_id, first_ms, first_event, person)",
    shardBy: "cityHash64(device_id)")

  /// Ordered migrations, run on every server; never edit a shipped one, add the next. Each statement
  /// is idempotent (`IF NOT EXISTS`), so instances starting at once can both run them; backfills
  /// read each server's own shard.
  var migrations: [[String]] {
    [
      Self.tables.flatMap(create),
      create(Self.persons) + [
        """
        INSERT INTO \(local("persons")) (app, device_id, person, first_ms, first_event)
        SELECT app, device_id, argMin(uid, (occurred_at, event_id)), min(occurred_at),
          argMin(event_id, (occurred_at, event_id))
        FROM (SELECT app, device_id, assumeNotNull(user_id) AS uid, occurred_at, event_id FROM \(local("events"))
              WHERE isNotNull(user_id))
        GROUP BY app, device_id
        """
      ],
      Self.access.flatMap(create),
      Self.quarantine.flatMap(create),
      create(Self.clientDrops),
      rollupMigration,
      create(Self.savedViews),
      create(Self.annotations),
      eventsByNameMigration,
      closedDaysMigration,
      closedItemsMigration,
      firstSeenMigration,
      closedStepsMigration,
      closedRecordsMigration,
      closedTiesMigration,
      closedStepPeriodsMigration,
    ]
  }

  /// The quarantine (a newer `version` replaces an entry: its replay or new reasons) and the
  /// SimpleAnalytics submission memory, of migration 4.
  static let quarantine = [
    Table(
      name: "quarantine",
      columns: """
        id String, app String, route String, received_at Int64, entry String, truncated UInt8, reasons String,
        replayed_at Nullable(Int64), version UInt64
        """,
      engine: "ReplacingMergeTree(version) ORDER BY (app, id)",
      shardBy: "cityHash64(id)"),
    Table(
      name: "submissions",
      columns: "app String, device_id String, received_at Int64, items String, counters String",
      engine: "MergeTree ORDER BY (app, device_id, received_at)", shardBy: "cityHash64(device_id)"),
  ]

  /// Saved searches and reports, of migration 7: a newer `version` replaces a view (an edit, or its
  /// deletion, `deleted = 1`).
  static let savedViews = Table(
    name: "saved_views",
    columns: """
      id String, app String, name String, path String, query String, created_by String, created_at Int64,
      updated_at Int64, deleted UInt8, version UInt64
      """,
    engine: "ReplacingMergeTree(version) ORDER BY id", shardBy: "cityHash64(id)")

  /// Chart notes, of migration 8: a deletion writes the note again with `deleted = 1` and a newer
  /// `version`.
  static let annotations = Table(
    name: "annotations",
    columns:
      "id String, app String, time Int64, text String, created_by String, created_at Int64, deleted UInt8, version UInt64",
    engine: "ReplacingMergeTree(version) ORDER BY id", shardBy: "cityHash64(id)")

  /// Client drop reports, of migration 5: appended; reads take each (app, report, service, reason) once.
  static let clientDrops = Table(
    name: "client_drops",
    columns: """
      app String, report_id String, service String, reason String, count Int64, device_id String, app_name String,
      app_version String, platform String, reported_at Int64, received_at Int64
      """,
    engine: "ReplacingMergeTree ORDER BY (app, report_id, service, reason)", shardBy: "cityHash64(device_id)")

  /// Dashboard sessions (a newer `version` replaces a row: the last use, or the end, which always
  /// wins) and the audit trail, of migration 3.
  static let access = [
    Table(
      name: "sessions",
      columns: """
        hash String, key_id String, scope String, app String, created_at Int64, last_used_at Int64,
        ended_at Nullable(Int64), version UInt64
        """,
      engine: "ReplacingMergeTree(version) ORDER BY hash",
      shardBy: "cityHash64(hash)"),
    Table(
      name: "audit", columns: "time Int64, actor String, action String, detail String",
      engine: "MergeTree ORDER BY time", shardBy: "cityHash64(actor)"),
  ]

  /// The statements adding each column ``ContextField`` declares that the events or counters tables
  /// lack (`present`: their column names by table name, from `system.columns`), local tables before
  /// `Distributed` ones: a context field added to the declaration needs no migration here. Rows
  /// stored before read it empty, except the library's name and version, which read the `library`
  /// column that held `name/version` before they had columns of their own.
  func contextColumnAdditions(present: [String: Set<String>]) -> [String] {
    let tables = ["events", "counters"].flatMap { name in cluster == nil ? [name] : [name + "_local", name] }
    return tables.flatMap { table in
      let columns = present[table] ?? []
      return ContextField.columns.filter { !columns.contains($0) }.map { column in
        "ALTER TABLE \(database).\(table) ADD COLUMN \(column) String DEFAULT "
          + (columns.contains("library") ? Self.formerDefault(column) : "''")
      }
    }
  }

  /// The statements adding the columns the server's tables lack (`present`, as for
  /// ``contextColumnAdditions(present:)``): the context columns, and the local events table's
  /// ``eventKey``.
  func columnAdditions(present: [String: Set<String>]) -> [String] {
    let events = cluster == nil ? "events" : "events_local"
    let key =
      present[events]?.contains(Self.eventKey) == true
      ? [] : ["ALTER TABLE \(local("events")) ADD COLUMN \(Self.eventKey) UInt64 MATERIALIZED cityHash64(event_id)"]
    return contextColumnAdditions(present: present) + key
  }

  /// The event id's 64-bit hash, a column the server computes at insert (`MATERIALIZED`) in the
  /// local events table alone: `Distributed` inserts never carry it, and reads name it on each
  /// server. A write looks its ids up by it first (`PREWHERE`): 8 bytes a row instead of an id's
  /// 36, and ids read only in the granules where a hash matches. Ids that do not sort by time (a
  /// vendor's random ids) fall in every granule of their day, so the lookup reads the whole day;
  /// by this column it reads a quarter of the bytes. Rows stored before it existed compute it when
  /// read, until their parts are merged.
  static let eventKey = "event_key"

  /// What a context column reads in rows stored before it existed.
  private static func formerDefault(_ column: String) -> String {
    switch column {
    case ContextField.libraryName.column: "splitByChar('/', library)[1]"
    case ContextField.libraryVersion.column:
      "if(position(library, '/') = 0, '', substring(library, position(library, '/') + 1))"
    default: "''"
    }
  }

  /// The columns of the events and counters tables, as `table`, `name` rows.
  var contextColumnsQuery: String {
    """
    SELECT table, name FROM system.columns WHERE database = '\(database)'
      AND table IN ('events', 'counters', 'events_local', 'counters_local')
    """
  }

  /// Each device's person in `app` (a literal): the user of its earliest row; the device as `key`
  /// names it, and grouped by it (a hash groups in about half the time of its id: 0.14–0.17 s
  /// against 0.24–0.33 s at 100M events). With `among` (a query of device hashes), only those
  /// devices'. The funnel picks the same from the rows as stored, in the collector, and asks this
  /// only for ties (``FirstPersons``): a change to the rule changes both, and
  /// `aDeviceTiedBetweenTwoPeopleIsTheirsBySmallerEventID` holds them equal.
  func personOfDevice(app: String, key: UnitKey, among devices: String? = nil) -> String {
    let among = devices.map { " AND cityHash64(device_id) IN (\($0))" } ?? ""
    return """
      SELECT \(key.deviceColumn(rollup: false)), argMin(person, (first_ms, first_event)) AS person
      FROM \(persons) WHERE app = \(app)\(among) GROUP BY \(key.device)
      """
  }

  /// The statements creating `table` on one server: the table itself, or on a cluster the local
  /// table and the `Distributed` table over it.
  func create(_ table: Table) -> [String] {
    var statements = [
      "CREATE TABLE IF NOT EXISTS \(local(table.name)) (\(table.columns)) ENGINE = \(table.engine)"
    ]
    if let cluster {
      statements.append(
        "CREATE TABLE IF NOT EXISTS \(self.table(table.name)) AS \(local(table.name)) "
          + "ENGINE = Distributed(\(cluster), \(database), \(table.name)_local, \(table.shardBy))")
    }
    return statements
  }
}
