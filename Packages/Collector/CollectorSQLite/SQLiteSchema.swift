import CollectorStore
import CollectorWire
import GRDB
import GRDBSQLite

/// The SQLite schema, as ordered migrations. Never edit a shipped migration: add the next one.
enum SQLiteSchema {
  /// The context columns as migration 1 created them (events and counters alike): its own text, not
  /// today's ``StoredColumns``, so the shipped migration stays what it was.
  private static let context1 = """
    app_name TEXT NOT NULL, app_version TEXT NOT NULL, app_build TEXT NOT NULL, os_name TEXT NOT NULL,
    os_version TEXT NOT NULL, platform TEXT NOT NULL, device_model TEXT NOT NULL, locale TEXT NOT NULL,
    library TEXT NOT NULL
    """

  static let migrations: [(String, String)] = [
    (
      "1-events-counters-keys",
      """
      CREATE TABLE events (
        app TEXT NOT NULL,
        event_id TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        occurred_at INTEGER NOT NULL,
        utc_offset_minutes INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        device_id TEXT NOT NULL,
        user_id TEXT,
        session_id INTEGER,
        \(context1),
        parameters TEXT NOT NULL CHECK (json_valid(parameters))
      );
      CREATE UNIQUE INDEX events_app_event_id ON events (app, event_id);
      CREATE INDEX events_app_occurred_at ON events (app, occurred_at);
      CREATE TABLE counters (
        app TEXT NOT NULL,
        counter_id TEXT NOT NULL,
        device_id TEXT NOT NULL,
        name TEXT NOT NULL,
        count INTEGER NOT NULL,
        first_counted_at INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        \(context1),
        PRIMARY KEY (app, counter_id)
      );
      CREATE INDEX counters_app_device ON counters (app, device_id);
      CREATE TABLE keys (
        id TEXT NOT NULL PRIMARY KEY,
        app TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('write', 'admin')),
        hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      """
    ),
    (
      "2-rollups-and-read-indexes",
      ([
        "CREATE INDEX events_app_name_occurred_at ON events (app, name, occurred_at)",
        "CREATE INDEX events_app_device ON events (app, device_id, occurred_at)",
      ] + rollups.createActivity + rollups.addActivity(from: "events", where: "true")).joined(separator: ";\n")
    ),
    (
      "3-commerce-facts",
      (rollups.createCommerce + rollups.addCommerce(from: "events", where: "true")).joined(separator: ";\n")
    ),
    (
      "4-persons",
      [persons.create, persons.upsert(from: "events", where: "true", time: "occurred_at")].joined(separator: ";\n")
    ),
    (
      "5-read-keys-sessions-audit",
      """
      CREATE TABLE keys_new (
        id TEXT NOT NULL PRIMARY KEY,
        app TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('write', 'read', 'admin')),
        hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      INSERT INTO keys_new SELECT id, app, scope, hash, created_at, revoked_at FROM keys;
      DROP TABLE keys;
      ALTER TABLE keys_new RENAME TO keys;
      CREATE TABLE sessions (
        hash TEXT NOT NULL PRIMARY KEY,
        key_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        app TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER NOT NULL,
        ended_at INTEGER
      );
      CREATE TABLE audit (time INTEGER NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL);
      CREATE INDEX audit_time ON audit (time);
      """
    ),
    ("6-quarantine-submissions", SQLiteQuarantine.migration),
    ("7-client-drops", SQLiteClientDrops.migration),
    ("8-context-fields", contextFieldsMigration),
    ("9-commerce-vocabularies", rebuildCommerce),
    // Items keep their category path (`Home > Kitchen`, GA4's `item_category2` … too).
    ("10-category-paths", rebuildCommerce),
    (
      "11-saved-views",
      """
      CREATE TABLE saved_views (
        id TEXT PRIMARY KEY, app TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL, query TEXT NOT NULL,
        created_by TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
      );
      CREATE INDEX saved_views_app ON saved_views (app, name);
      """
    ),
    (
      "12-annotations",
      """
      CREATE TABLE annotations (
        id TEXT PRIMARY KEY, app TEXT NOT NULL, time INTEGER NOT NULL, text TEXT NOT NULL, created_by TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX annotations_app_time ON annotations (app, time);
      """
    ),
    // The funnel reads its step events from this index alone (a covering index).
    (
      "13-funnel-index",
      """
      CREATE INDEX events_app_name_occurred_at_devices ON events (app, name, occurred_at, device_id, event_id);
      DROP INDEX events_app_name_occurred_at;
      """
    ),
    // Reports on the names rollup (top events, one event's series) over a wide range read it by
    // name and device, without sorting it (``SQLDialect/indexesRollupsByKey``).
    (
      "14-names-by-name",
      "CREATE INDEX rollup_names_by_name ON rollup_names (app, name, device_id, hour, events)"
    ),
    // Totals, devices and sessions on the sessions rollup (the overview, people, sessions) over a
    // wide range read it by device and session: their distinct devices and sessions come in order.
    // Both indexes by key are partial on a term every row meets, `device_id IS NOT NULL`: only a
    // query that names it reads them (``SQLDialect/indexesRollupsByKey``). Whole, they covered
    // more than the primary key, and with statistics older than the index SQLite read every row
    // of the app through one for a report of three days.
    (
      "15-rollups-by-key",
      """
      DROP INDEX rollup_names_by_name;
      CREATE INDEX rollup_names_by_name ON rollup_names (app, name, device_id, hour, events)
        WHERE device_id IS NOT NULL;
      CREATE INDEX rollup_sessions_by_device ON rollup_sessions (app, device_id, session_key, hour, events)
        WHERE device_id IS NOT NULL;
      """
    ),
    // Revenue and top items look for an earlier order of a transaction only where another order has
    // its key (``SQLDialect/singleOrderMarks``): `single`, kept by every later rollup addition.
    (
      "16-single-orders",
      ([
        "ALTER TABLE rollup_orders ADD COLUMN single INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE rollup_items ADD COLUMN single INTEGER NOT NULL DEFAULT 0",
      ] + rollups.markSingles(from: "events", where: nil)).joined(separator: ";\n")
    ),
    // Top items over a wide range read the items in item order, every column they use in the index
    // (``SQLDialect/indexesRollupsByKey``): no sort of every item. Partial on a term every item meets
    // (``CommerceSQL/items(from:where:)`` keeps no other): only a query naming it reads the index.
    // `item IS NOT NULL`, as the rollups' indexes by key have it, did not keep SQLite off it: on a
    // column declared NOT NULL the term is always true, and a narrow range without statistics read
    // every item of the app through it.
    (
      "17-items-by-item",
      """
      CREATE INDEX rollup_items_by_item ON rollup_items (app, item, currency, t, event_id, k, single, device_id,
        quantity, price, name, brand, category, platform, app_version, os_version) WHERE quantity >= 1
      """
    ),
    // The sessions rollup's index by device and session holds each row's first and last time too,
    // so that sessions, active users and retention read by device (``SQLDialect/indexesRollupsByKey``)
    // from the index alone.
    (
      "18-sessions-by-device-with-times",
      """
      DROP INDEX rollup_sessions_by_device;
      CREATE INDEX rollup_sessions_by_device ON rollup_sessions (app, device_id, session_key, hour, events, first_ms,
        last_ms) WHERE device_id IS NOT NULL
      """
    ),
    // Device sets, a cache of the names rollup built for past hours (``DeviceSetTables``).
    ("19-device-sets", deviceSets.create(blob: "BLOB").joined(separator: ";\n")),
    // Sets per hour and name over every platform and version; every hour built again.
    ("20-device-set-totals", deviceSets.createTotals(blob: "BLOB").joined(separator: ";\n")),
    // The funnel's step events per built hour (``StepCacheBuild``); every hour built again.
    ("21-step-cache", deviceSets.createSteps(blob: "BLOB").joined(separator: ";\n")),
    // Events by parameter value per built hour (``ParameterCacheBuild``); every hour built again.
    ("22-parameter-cache", deviceSets.createParameters(text: "TEXT", blob: "BLOB").joined(separator: ";\n")),
    // Ids, currencies and names are strings, amounts numbers: objects, lists and booleans were read as text and 1.
    ("23-commerce-value-types", rebuildCommerce),
  ]

  /// The context's time zone and its library's name and version as columns of their own (the
  /// `library` column held `name/version`): the stored context is then ``ContextField``, column for
  /// column.
  static let contextFieldsMigration = ["events", "counters"].map { table in
    """
    ALTER TABLE \(table) ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';
    ALTER TABLE \(table) ADD COLUMN library_name TEXT NOT NULL DEFAULT '';
    ALTER TABLE \(table) ADD COLUMN library_version TEXT NOT NULL DEFAULT '';
    UPDATE \(table) SET
      library_name = CASE instr(library, '/') WHEN 0 THEN library ELSE substr(library, 1, instr(library, '/') - 1) END,
      library_version = CASE instr(library, '/') WHEN 0 THEN '' ELSE substr(library, instr(library, '/') + 1) END;
    ALTER TABLE \(table) DROP COLUMN library
    """
  }.joined(separator: ";\n")

  /// Adds each column ``ContextField`` declares that the events or counters table lacks (empty for
  /// the rows already stored): a context field added to the declaration needs no migration here.
  static func addContextColumns(_ db: Database) throws {
    for table in ["events", "counters"] {
      let present = Set(try db.columns(in: table).map(\.name))
      for column in ContextField.columns where !present.contains(column) {
        try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(column) TEXT NOT NULL DEFAULT ''")
      }
    }
  }

  /// The commerce facts derived again from every stored event, by today's ``CommerceSQL``.
  static var rebuildCommerce: String {
    (["DELETE FROM rollup_orders", "DELETE FROM rollup_items"] + rollups.addCommerce(from: "events", where: "true"))
      .joined(separator: ";\n")
  }

  /// The device-to-person table (filled from the events already stored when the migration runs).
  static let persons = PersonSQL(events: "events", persons: "persons", dialect: SQLiteDialect())

  /// The rollups (filled from the events already stored when the migration runs).
  static let rollups = RollupSQL(tables: RollupTables(prefix: ""), dialect: SQLiteDialect())

  static var versions: Int { migrations.count }

  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    for (identifier, sql) in migrations {
      migrator.registerMigration(identifier) { db in try db.execute(sql: sql) }
    }
    return migrator
  }
}

/// Row mapping between the store's types and SQLite rows.
enum SQLiteRows {
  static let insertEvent = """
    INSERT INTO events (\(StoredEvent.columnNames))
    VALUES (\(placeholders(StoredEvent.columns.count)))
    ON CONFLICT (app, event_id) DO NOTHING
    """

  static let insertCounter = """
    INSERT INTO counters (\(StoredCounter.columnNames)) VALUES (\(placeholders(StoredCounter.columns.count)))
    ON CONFLICT (app, counter_id) DO UPDATE SET count = excluded.count, received_at = excluded.received_at
      WHERE excluded.count > counters.count
    """

  private static func placeholders(_ count: Int) -> String {
    Array(repeating: "?", count: count).joined(separator: ", ")
  }

  /// Inserts with the C API on GRDB's cached statements: binding through `StatementArguments`
  /// (an array of existentials per row) cost more than SQLite's own work for the row.
  static func insert(_ batch: StoreBatch, into db: Database) throws -> WriteSummary {
    var summary = WriteSummary()
    if !batch.events.isEmpty {
      // One writer: every row this transaction inserts gets a rowid above the largest before it.
      let before = try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM events") ?? 0
      let statement = try db.cachedStatement(sql: insertEvent)
      var binder = Binder(statement.sqliteStatement)
      for event in batch.events {
        binder.start()
        for column in StoredEvent.columns { binder.value(column.value(event)) }
        if try binder.step(db) { summary.insertedEvents += 1 } else { summary.duplicateEvents += 1 }
      }
      if summary.insertedEvents > 0 {
        let schema = SQLiteSchema.self
        let touched = try Bool.fetchOne(db.cachedStatement(sql: schema.insertedTouchBuilt), arguments: [before]) ?? true
        for sql in schema.rollups.add(from: "events", where: "rowid > ?") + (touched ? schema.invalidateInserted : []) {
          try db.cachedStatement(sql: sql).execute(arguments: [before])
        }
        try db.cachedStatement(
          sql: SQLiteSchema.persons.upsert(from: "events", where: "rowid > ?", time: "occurred_at")
        )
        .execute(arguments: [before])
      }
    }
    if !batch.counters.isEmpty {
      let statement = try db.cachedStatement(sql: insertCounter)
      var binder = Binder(statement.sqliteStatement)
      for counter in batch.counters {
        binder.start()
        for column in StoredCounter.columns { binder.value(column.value(counter)) }
        if try binder.step(db) { summary.insertedCounters += 1 } else { summary.duplicateCounters += 1 }
      }
    }
    try SQLiteQuarantine.insert(batch, into: db)
    try SQLiteClientDrops.insert(batch, into: db)
    return summary
  }

  /// Binds a row's values in order and runs the statement once.
  struct Binder {
    let statement: SQLiteStatement
    var index: Int32 = 0
    /// SQLite copies the bytes before `bind` returns.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ statement: SQLiteStatement) { self.statement = statement }

    mutating func start() {
      sqlite3_reset(statement)
      index = 0
    }

    mutating func text(_ value: String?) {
      index += 1
      guard var value else {
        sqlite3_bind_null(statement, index)
        return
      }
      let column = index
      value.withUTF8 { bytes in
        if let base = bytes.baseAddress, !bytes.isEmpty {
          let characters = UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
          _ = sqlite3_bind_text(statement, column, characters, Int32(bytes.count), Self.transient)
        } else {
          _ = sqlite3_bind_text(statement, column, "", 0, Self.transient)
        }
      }
    }

    /// One value, bound as its kind.
    mutating func value(_ value: SQLValue) {
      switch value {
      case .text(let text): self.text(text)
      case .int(let number): integer(number)
      case .double(let number):
        index += 1
        sqlite3_bind_double(statement, index, number)
      case .null: integer(nil)
      }
    }

    mutating func integer(_ value: Int64?) {
      index += 1
      if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    /// Runs the insert; true when a row was inserted or changed.
    func step(_ db: Database) throws -> Bool {
      let code = sqlite3_step(statement)
      guard code == SQLITE_DONE else {
        let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
        sqlite3_reset(statement)
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
      }
      return sqlite3_changes(db.sqliteConnection) > 0
    }
  }

  static func event(_ row: Row) -> StoredEvent {
    StoredEvent { column in value(row[column.name]) }
  }

  /// A stored value as a report value.
  static func value(_ value: DatabaseValue) -> SQLValue {
    switch value.storage {
    case .null: .null
    case .int64(let number): .int(number)
    case .double(let number): .double(number)
    case .string(let text): .text(text)
    case .blob(let data): .text(String(decoding: data, as: UTF8.self))
    }
  }

  static func counter(_ row: Row) -> StoredCounter {
    StoredCounter { column in value(row[column.name]) }
  }

  static func key(_ row: Row) -> KeyRecord? {
    guard let scope = KeyRecord.Scope(rawValue: row["scope"]) else { return nil }
    return KeyRecord(
      id: row["id"], app: row["app"], scope: scope, hash: row["hash"], createdAt: row["created_at"],
      revokedAt: row["revoked_at"]
    )
  }
}
