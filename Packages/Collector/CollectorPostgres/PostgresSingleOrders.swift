import CollectorStore
import PostgresNIO

/// The commerce facts' `single` on PostgreSQL (``SingleOrderMarks/byBuild``): writers run at once,
/// so no write can tell that no other order has its key. The device-set build marks the orders of
/// the hours it builds while writes wait for it; a trigger on the orders unmarks, in the write that
/// adds an order, every order (and its items) sharing that order's key. The trigger lives in the
/// schema, so a collector of any version writing to it keeps the marks exact.
extension PostgresTables {
  /// The migration adding `single` (0: the probe kept) to both fact tables, and the trigger. It marks
  /// nothing: its `ALTER TABLE`s hold every write off until it commits, and marking every stored
  /// order in it held them 25 s on a store of 10M events (Docs/Benchmarks.md). The build marks the
  /// hours it builds, and migration 20 leaves the hours built before it to
  /// ``PostgresEventStore/markUnmarkedHours()``.
  ///
  /// Edited the day it shipped, when it still marked every order: a schema migrated by that version
  /// has its marks and gets them once more from the build; both end with the same columns and trigger.
  var singleOrdersMigration: [String] {
    let facts = rollups.tables
    return [
      "ALTER TABLE \(facts.orders) ADD COLUMN single integer NOT NULL DEFAULT 0",
      "ALTER TABLE \(facts.items) ADD COLUMN single integer NOT NULL DEFAULT 0",
      unmarkFunction,
      """
      CREATE TRIGGER rollup_orders_unmark_single AFTER INSERT ON \(facts.orders)
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION \(unmarkFunctionName)()
      """,
    ]
  }

  /// The hours whose orders wait for their marks: built before the marks existed.
  var unmarkedHours: String { "\"\(schema)\".single_order_hours_unmarked" }

  /// Migration 20: the hours built when the marks came (``unmarkedHours``), each marked later in a
  /// transaction of its own.
  var unmarkedHoursMigration: [String] {
    [
      "CREATE TABLE \(unmarkedHours) (app text NOT NULL, hour bigint NOT NULL, PRIMARY KEY (app, hour))",
      "INSERT INTO \(unmarkedHours) (app, hour) SELECT app, hour FROM \(deviceSets.tables.hours)",
    ]
  }

  /// The statements of a build marking the orders of app `$1` with times in `[$2, $3)`.
  var markSingleOrders: [String] {
    CommerceSQL(dialect: PostgresDialect()).markSingles(
      orders: rollups.tables.orders, items: rollups.tables.items, placeholder: PostgresDialect().placeholder)
  }

  private var unmarkFunctionName: String { "\"\(schema)\".rollup_orders_unmark_single" }

  /// Unmarks the orders of every (app, key) of the inserted orders (`added`), and their items. Each
  /// key's orders are read through the orders' `(app, k)` index and their items through their key
  /// (the fenced `LATERAL`s: a write costs a probe per order it adds, whatever the tables hold and
  /// whatever their statistics say), and locked key by key in the keys' order: two writes at once
  /// lock the rows they unmark in one order, and never wait on each other. Both run as `EXECUTE`, so
  /// each write plans them for the tables as they are: PL/pgSQL keeps a statement's plan for its
  /// connection, and one made while the tables were nearly empty read every order of the app at
  /// each later write (one connection's writes 0.6 → 2.9 s within 15 s of load, measured).
  private var unmarkFunction: String {
    let (orders, items) = (rollups.tables.orders, rollups.tables.items)
    let keys = "(SELECT DISTINCT app, k FROM added ORDER BY app, k) AS a"
    let ofKey = "\(orders) o WHERE o.app = a.app AND o.k = a.k"
    return """
      CREATE FUNCTION \(unmarkFunctionName)() RETURNS trigger LANGUAGE plpgsql AS $unmark$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM added) THEN
          RETURN NULL;
        END IF;
        EXECUTE $orders$ UPDATE \(orders) AS f SET single = 0 FROM (
          SELECT o.app, o.event_id FROM \(keys) CROSS JOIN LATERAL (
            SELECT o.app, o.event_id FROM \(ofKey) AND o.single = 1 ORDER BY o.event_id OFFSET 0 FOR UPDATE) AS o
        ) AS l
        WHERE f.app = l.app AND f.event_id = l.event_id $orders$;
        EXECUTE $items$ UPDATE \(items) AS f SET single = 0 FROM (
          SELECT i.app, i.event_id, i.position FROM \(keys)
          CROSS JOIN LATERAL (SELECT o.app, o.event_id FROM \(ofKey) ORDER BY o.event_id OFFSET 0) AS o
          CROSS JOIN LATERAL (
            SELECT i.app, i.event_id, i.position FROM \(items) i
            WHERE i.app = o.app AND i.event_id = o.event_id AND i.single = 1 ORDER BY i.position OFFSET 0 FOR UPDATE) AS i
        ) AS l
        WHERE f.app = l.app AND f.event_id = l.event_id AND f.position = l.position $items$;
        RETURN NULL;
      END
      $unmark$
      """
  }
}

extension PostgresEventStore {
  /// Marks the orders of the hours built before the marks existed (``PostgresTables/unmarkedHours``),
  /// an hour a transaction under the build's lock, so writes wait for one hour's marks at a time;
  /// returns the hours marked. Run by every ``buildDeviceSets(before:)``, first.
  @discardableResult
  func markUnmarkedHours() async throws -> Int {
    var marked = 0
    while try await guarded({ try await client.withTransaction(logger: logger) { try await markUnmarkedHour($0) } }) {
      marked += 1
    }
    return marked
  }

  /// Marks the orders of the first hour of ``PostgresTables/unmarkedHours`` and takes it off;
  /// `false` when none is left.
  private func markUnmarkedHour(_ connection: PostgresConnection) async throws -> Bool {
    try await connection.query(PostgresQuery(unsafeSQL: tables.buildLock), logger: logger)
    var next: (app: String, hour: Int64)?
    for try await row in try await connection.query(
      PostgresQuery(unsafeSQL: "SELECT app, hour FROM \(tables.unmarkedHours) ORDER BY app, hour LIMIT 1"),
      logger: logger
    ).decode((String, Int64).self) {
      next = row
    }
    guard let (app, hour) = next else { return false }
    var range = PostgresBindings()
    range.append(app)
    range.append(hour)
    range.append(hour + RollupTables.hour)
    try await markSingleOrders(connection, range)
    try await connection.query(
      "DELETE FROM \(unescaped: tables.unmarkedHours) WHERE app = \(app) AND hour = \(hour)", logger: logger)
    return true
  }

  /// Marks the orders alone with their key among those of `range` (app, from, to), and their items
  /// (``PostgresTables/markSingleOrders``); the caller holds ``PostgresTables/buildLock``.
  func markSingleOrders(_ connection: PostgresConnection, _ range: PostgresBindings) async throws {
    for statement in tables.markSingleOrders {
      try await connection.query(PostgresQuery(unsafeSQL: statement, binds: range), logger: logger)
    }
  }
}
