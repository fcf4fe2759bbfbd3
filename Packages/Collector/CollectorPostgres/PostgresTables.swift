import CollectorStore
import CollectorWire
import Foundation
import PostgresNIO

/// The PostgreSQL schema, its migrations and its row mapping, for one schema name.
struct PostgresTables: Sendable {
  let schema: String

  var events: String { "\"\(schema)\".events" }
  var counters: String { "\"\(schema)\".counters" }
  var keys: String { "\"\(schema)\".keys" }
  var sessions: String { "\"\(schema)\".sessions" }
  var audit: String { "\"\(schema)\".audit" }
  var savedViews: String { "\"\(schema)\".saved_views" }
  var annotations: String { "\"\(schema)\".annotations" }
  var quarantine: String { "\"\(schema)\".quarantine" }
  var submissions: String { "\"\(schema)\".submissions" }
  var migrationsTable: String { "\"\(schema)\".schema_migrations" }

  static func isValidSchema(_ name: String) -> Bool {
    guard let first = name.utf8.first, !name.isEmpty, name.utf8.count <= 63 else { return false }
    guard first == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
    return name.utf8.allSatisfy { byte in
      byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
  }

  /// Held by the transaction that applies migrations: one lock per schema (the project's key and the
  /// schema name's hash), so instances migrating the same schema take turns and other schemas'
  /// migrations run beside them.
  var migrationLock: String { "SELECT pg_advisory_xact_lock(\(migrationLockKey))" }

  /// The two keys of ``migrationLock``.
  var migrationLockKey: String { "7358201, hashtext('\(schema)')" }

  var bootstrap: [String] {
    [
      "CREATE SCHEMA IF NOT EXISTS \"\(schema)\"",
      "CREATE TABLE IF NOT EXISTS \(migrationsTable) (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    ]
  }

  /// Ordered migrations; never edit a shipped one, add the next.
  var migrations: [[String]] {
    let context = """
      app_name text NOT NULL, app_version text NOT NULL, app_build text NOT NULL, os_name text NOT NULL,
      os_version text NOT NULL, platform text NOT NULL, device_model text NOT NULL, locale text NOT NULL,
      library text NOT NULL
      """
    return [
      [
        """
        CREATE TABLE \(events) (
          app text NOT NULL, event_id text NOT NULL, name text NOT NULL, kind text NOT NULL,
          occurred_at timestamptz NOT NULL, utc_offset_minutes smallint NOT NULL, received_at timestamptz NOT NULL,
          device_id text NOT NULL, user_id text, session_id bigint, \(context), parameters jsonb NOT NULL,
          PRIMARY KEY (app, event_id)
        )
        """,
        "CREATE INDEX events_app_occurred_at ON \(events) (app, occurred_at)",
        """
        CREATE TABLE \(counters) (
          app text NOT NULL, counter_id text NOT NULL, device_id text NOT NULL, name text NOT NULL, count bigint NOT NULL,
          first_counted_at timestamptz NOT NULL, received_at timestamptz NOT NULL, \(context),
          PRIMARY KEY (app, counter_id)
        )
        """,
        "CREATE INDEX counters_app_device ON \(counters) (app, device_id)",
        """
        CREATE TABLE \(keys) (
          id text PRIMARY KEY, app text NOT NULL, scope text NOT NULL CHECK (scope IN ('write', 'admin')),
          hash text NOT NULL UNIQUE, created_at timestamptz NOT NULL, revoked_at timestamptz
        )
        """,
      ],
      [
        "CREATE INDEX events_app_name_occurred_at ON \(events) (app, name, occurred_at)",
        "CREATE INDEX events_app_device ON \(events) (app, device_id, occurred_at)",
      ] + rollups.createActivity + rollups.addActivity(from: events, where: "true"),
      rollups.createCommerce + rollups.addCommerce(from: events, where: "true"),
      [persons.create, rebuildPersons],
      [
        "ALTER TABLE \(keys) DROP CONSTRAINT IF EXISTS keys_scope_check",
        "ALTER TABLE \(keys) ADD CONSTRAINT keys_scope_check CHECK (scope IN ('write', 'read', 'admin'))",
        """
        CREATE TABLE \(sessions) (
          hash text PRIMARY KEY, key_id text NOT NULL, scope text NOT NULL, app text NOT NULL,
          created_at bigint NOT NULL, last_used_at bigint NOT NULL, ended_at bigint
        )
        """,
        "CREATE TABLE \(audit) (time bigint NOT NULL, actor text NOT NULL, action text NOT NULL, detail text NOT NULL)",
        "CREATE INDEX audit_time ON \(audit) (time)",
      ],
      quarantineMigration,
      clientDropsMigration,
      [events, counters].flatMap(contextFieldsMigration),
      // The commerce facts again, read by every vocabulary of `CommerceVocabulary` (Segment's and
      // Mixpanel's orders too).
      rebuildCommerce,
      // Items keep their category path (`Home > Kitchen`, GA4's `item_category2` … too).
      rebuildCommerce,
      [
        """
        CREATE TABLE \(savedViews) (
          id text PRIMARY KEY, app text NOT NULL, name text NOT NULL, path text NOT NULL, query text NOT NULL,
          created_by text NOT NULL, created_at bigint NOT NULL, updated_at bigint NOT NULL
        )
        """,
        "CREATE INDEX saved_views_app ON \(savedViews) (app, name)",
      ],
      [
        """
        CREATE TABLE \(annotations) (
          id text PRIMARY KEY, app text NOT NULL, time bigint NOT NULL, text text NOT NULL, created_by text NOT NULL,
          created_at bigint NOT NULL
        )
        """,
        "CREATE INDEX annotations_app_time ON \(annotations) (app, time)",
      ],
      // The funnel reads its step events from this index alone (index-only scans).
      [
        "CREATE INDEX events_app_name_occurred_at_devices ON \(events) (app, name, occurred_at) INCLUDE (device_id, event_id)",
        "DROP INDEX \"\(schema)\".events_app_name_occurred_at",
      ],
      deviceSets.create(blob: "bytea"),
      deviceSets.createTotals(blob: "bytea"),
      deviceSets.createSteps(blob: "bytea"),
      deviceSets.createParameters(text: "text", blob: "bytea"),
      // The parameters as sent where `jsonb` would reorder them (events stored before: `jsonb`'s order).
      ["ALTER TABLE \(events) ADD COLUMN \(PostgresParameterText.asSent("parameters")) text"],
      // Orders alone with their key marked, so revenue and top items skip the probe for an earlier one.
      singleOrdersMigration,
      // The orders of the hours built before then, marked an hour at a time by the build.
      unmarkedHoursMigration,
      // Sessions and the sessions the overview counts read the sessions rollup by device and
      // session in this index's order (no sort); it serves every read by device the index it
      // replaces served. No `INCLUDE` columns: an update of a row's events and times stays an
      // update no index sees. Built in the migration's transaction: writes wait for it (0.8 s at
      // 10M events).
      [
        "DROP INDEX \"\(schema)\".rollup_sessions_app_device",
        "CREATE INDEX rollup_sessions_by_device ON \(rollups.tables.sessions) (app, device_id, session_key, hour)",
      ],
      // Top items reads the item facts in item order from this index alone (grouped byte by byte,
      // as the report groups them): no sort of every item, no row of the table read, with or
      // without a brand or category (read through the index, a brand's items read their rows
      // one by one: 3× slower than the table's scan, measured).
      [
        "CREATE INDEX rollup_items_by_item ON \(rollups.tables.items) (app, item COLLATE \"C\", currency COLLATE \"C\") "
          + "INCLUDE (t, quantity, price, k, device_id, single, event_id, brand, category)"
      ],
    ]
  }

  /// The commerce facts derived again from every stored event, by today's ``CommerceSQL``.
  private var rebuildCommerce: [String] {
    ["DELETE FROM \(rollups.tables.orders)", "DELETE FROM \(rollups.tables.items)"]
      + rollups.addCommerce(from: events, where: "true")
  }

  /// The context's time zone and its library's name and version as columns of their own (`library`
  /// held `name/version`): the stored context is then ``ContextField``, column for column.
  private func contextFieldsMigration(_ table: String) -> [String] {
    [
      """
      ALTER TABLE \(table) ADD COLUMN time_zone text NOT NULL DEFAULT '',
        ADD COLUMN library_name text NOT NULL DEFAULT '', ADD COLUMN library_version text NOT NULL DEFAULT ''
      """,
      """
      UPDATE \(table) SET library_name = split_part(library, '/', 1),
        library_version = CASE WHEN strpos(library, '/') = 0 THEN '' ELSE substr(library, strpos(library, '/') + 1) END
      WHERE library <> ''
      """,
      "ALTER TABLE \(table) DROP COLUMN library",
    ]
  }

  /// The context columns the events and counters tables have, as `table.column`.
  var presentContextColumns: String {
    """
    SELECT table_name || '.' || column_name FROM information_schema.columns
    WHERE table_schema = '\(schema)' AND table_name IN ('events', 'counters')
    """
  }

  /// The statements adding each column ``ContextField`` declares that the events or counters table
  /// lacks (`present` as from ``presentContextColumns``), empty for the rows already stored: a
  /// context field added to the declaration needs no migration here.
  func addContextColumns(present: Set<String>) -> [String] {
    [("events", events), ("counters", counters)].flatMap { name, table in
      ContextField.columns.filter { !present.contains("\(name).\($0)") }.map {
        "ALTER TABLE \(table) ADD COLUMN \($0) text NOT NULL DEFAULT ''"
      }
    }
  }

  /// The device-to-person table.
  var persons: PersonSQL { PersonSQL(events: events, persons: "\"\(schema)\".persons", dialect: PostgresDialect()) }

  /// Fills the device-to-person table from every stored event.
  var rebuildPersons: String {
    persons.upsert(from: events, where: "true", time: rollups.ms("occurred_at"))
  }

  /// The rollups (filled from the events already stored when the migration runs).
  var rollups: RollupSQL {
    RollupSQL(tables: RollupTables(prefix: "\"\(schema)\"."), dialect: PostgresDialect())
  }

  // MARK: Writing

  func insertEvents(_ rows: [StoredEvent]) -> PostgresQuery {
    var binds = PostgresBindings()
    let columns = Self.unnest(rows, into: &binds)
    return PostgresQuery(
      unsafeSQL: """
        WITH inserted AS (
          INSERT INTO \(events) (\(columns.inserted))
          SELECT \(columns.selected) FROM unnest(\(columns.arrays)) AS r(\(columns.names))
          ON CONFLICT (app, event_id) DO NOTHING
          RETURNING app, event_id, name, occurred_at, device_id, user_id, session_id, platform, app_version,
            os_version, parameters
        ),
        \(Self.rollupUpdates(rollups.add(from: "inserted", where: "true"))),
        persons AS (\(persons.upsert(from: "inserted", where: "true", time: rollups.ms("occurred_at")))),
        \(invalidateInserted)
        SELECT count(*)::bigint FROM inserted
        """,
      binds: binds
    )
  }

  /// The rows' columns bound as one array each (``StoredRow/columns``), a nullable column with a
  /// second array saying where it has a value, a JSON column with a second one holding its text as
  /// sent where `jsonb` would reorder it (``PostgresParameterText``): what `unnest` reads, the
  /// names it gives them, what the insert selects from them and the columns it fills.
  private static func unnest<Row: StoredRow>(_ rows: [Row], into binds: inout PostgresBindings) -> (
    arrays: String, names: String, selected: String, inserted: String
  ) {
    var arrays: [String] = []
    var names: [String] = []
    var selected: [String] = []
    var inserted: [String] = []
    for column in Row.columns {
      let values = rows.map(column.value)
      switch column.kind {
      case .text, .json: binds.append(values.map { $0.text ?? "" })
      case .integer: binds.append(values.map { $0.int ?? 0 })
      case .time: binds.append(values.map { date($0.int ?? 0) })
      }
      arrays.append(arrayType[column.kind]!)
      names.append(column.name)
      inserted.append(column.name)
      selected.append(column.kind == .json ? "\(column.name)::jsonb" : column.name)
      if column.isNullable {
        binds.append(values.map { $0 != .null })
        arrays.append("bool[]")
        names.append("has_\(column.name)")
        selected[selected.count - 1] = "CASE WHEN has_\(column.name) THEN \(column.name) END"
      }
      if column.kind == .json {
        let asSent = PostgresParameterText.asSent(column.name)
        binds.append(values.map { PostgresParameterText.kept($0.text ?? "") })
        arrays.append("text[]")
        names.append(asSent)
        inserted.append(asSent)
        selected.append("NULLIF(\(asSent), '')")
      }
    }
    return (
      arrays.enumerated().map { "$\($0.offset + 1)::\($0.element)" }.joined(separator: ", "),
      names.joined(separator: ", "), selected.joined(separator: ", "), inserted.joined(separator: ", ")
    )
  }

  private static let arrayType: [StoredColumnKind: String] = [
    .text: "text[]", .json: "text[]", .integer: "bigint[]", .time: "timestamptz[]",
  ]

  /// The statements keeping the rollups current, as the data-modifying `WITH` queries of an insert.
  private static func rollupUpdates(_ statements: [String]) -> String {
    statements.enumerated().map { "rollup\($0.offset) AS (\($0.element))" }.joined(separator: ",\n")
  }

  func insertCounters(_ rows: [StoredCounter]) -> PostgresQuery {
    var binds = PostgresBindings()
    let columns = Self.unnest(rows, into: &binds)
    return PostgresQuery(
      unsafeSQL: """
        WITH inserted AS (
          INSERT INTO \(counters) AS c (\(columns.inserted))
          SELECT \(columns.selected) FROM unnest(\(columns.arrays)) AS r(\(columns.names))
          ON CONFLICT (app, counter_id) DO UPDATE SET count = excluded.count, received_at = excluded.received_at
            WHERE excluded.count > c.count
          RETURNING 1
        )
        SELECT count(*)::bigint FROM inserted
        """,
      binds: binds
    )
  }

  /// Timestamps travel as binary `timestamptz` (no per-row conversion on the server).
  static func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }

  // MARK: Reading

  private static func milliseconds(_ column: String) -> String {
    "\(PostgresDialect().milliseconds(column)) AS \(column)"
  }

  /// A row's columns as reads select them: times in ms, JSON as text (``StoredRow/columns``).
  static func selected<Row: StoredRow>(_ row: Row.Type) -> String {
    Row.columns.map { column in
      switch column.kind {
      case .text: column.name
      case .integer: "\(column.name)::bigint AS \(column.name)"
      case .time: milliseconds(column.name)
      case .json: PostgresParameterText.read(column.name)
      }
    }.joined(separator: ", ")
  }

  static let eventColumns = selected(StoredEvent.self)
  static let counterColumns = selected(StoredCounter.self)
  static let keyColumns = "id, app, scope, hash, \(milliseconds("created_at")), \(milliseconds("revoked_at"))"

  /// A row read column by column (``StoredRow/columns``), as ``selected(_:)`` selects them.
  static func read<Row: StoredRow>(_ plain: PostgresRow) throws -> Row {
    let row = plain.makeRandomAccess()
    return try Row { column in
      switch column.kind {
      case .text, .json: try row[column.name].decode(String?.self).map(SQLValue.text) ?? .null
      case .integer, .time: try row[column.name].decode(Int64?.self).map(SQLValue.int) ?? .null
      }
    }
  }

  static func event(_ plain: PostgresRow) throws -> StoredEvent { try read(plain) }

  static func counter(_ plain: PostgresRow) throws -> StoredCounter { try read(plain) }

  static func key(_ plain: PostgresRow) throws -> KeyRecord? {
    let row = plain.makeRandomAccess()
    guard let scope = KeyRecord.Scope(rawValue: try row["scope"].decode(String.self)) else { return nil }
    return KeyRecord(
      id: try row["id"].decode(String.self), app: try row["app"].decode(String.self), scope: scope,
      hash: try row["hash"].decode(String.self), createdAt: try row["created_at"].decode(Int64.self),
      revokedAt: try row["revoked_at"].decode(Int64?.self)
    )
  }
}

/// `postgres://user:password@host:port/database?sslmode=disable|prefer|require`
enum PostgresURL {
  static func configuration(_ url: String) throws -> PostgresClient.Configuration {
    guard let components = URLComponents(string: url), let scheme = components.scheme,
      scheme == "postgres" || scheme == "postgresql"
    else {
      throw StoreError.unavailable("the PostgreSQL URL must look like postgres://user:password@host:5432/database")
    }
    guard let user = components.user, !user.isEmpty else {
      throw StoreError.unavailable("the PostgreSQL URL names no user (postgres://USER:password@host/database)")
    }
    let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
    let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
    let tls: PostgresClient.Configuration.TLS
    switch mode {
    case "disable": tls = .disable
    case "prefer": tls = .prefer(.makeClientConfiguration())
    case "require": tls = .require(.makeClientConfiguration())
    default: throw StoreError.unavailable("sslmode \(mode) is not disable, prefer or require")
    }
    return PostgresClient.Configuration(
      host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: user,
      password: components.password?.removingPercentEncoding, database: database.isEmpty ? nil : database, tls: tls
    )
  }
}
