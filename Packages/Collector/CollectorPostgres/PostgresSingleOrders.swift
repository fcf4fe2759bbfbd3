import CollectorStore

/// The commerce facts' `single` on PostgreSQL (``SingleOrderMarks/byBuild``): writers run at once,
/// so no write can tell that no other order has its key. The device-set build marks the orders of
/// the hours it builds while writes wait for it; a trigger on the orders unmarks, in the write that
/// adds an order, every order (and its items) sharing that order's key. The trigger lives in the
/// schema, so a collector of any version writing to it keeps the marks exact.
extension PostgresTables {
  /// The migration adding `single` (0: the probe kept) to both fact tables, the trigger, and the
  /// marks of every order already stored: the columns' `ALTER TABLE` holds every write off until the
  /// migration commits, so the marks see every stored order, and every later write meets the trigger.
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
    ] + rollups.markSingles(from: events, where: nil)
  }

  /// The statements of a build marking the orders of app `$1` with times in `[$2, $3)`.
  var markSingleOrders: [String] {
    CommerceSQL(dialect: PostgresDialect()).markSingles(
      orders: rollups.tables.orders, items: rollups.tables.items, placeholder: PostgresDialect().placeholder)
  }

  private var unmarkFunctionName: String { "\"\(schema)\".rollup_orders_unmark_single" }

  /// Unmarks the orders of every (app, key) of the inserted orders (`added`), and their items, in
  /// the order of their keys: two writes at once lock the rows they unmark in one order.
  private var unmarkFunction: String {
    let (orders, items) = (rollups.tables.orders, rollups.tables.items)
    let shared = "(o.app, o.k) IN (SELECT app, k FROM added)"
    return """
      CREATE FUNCTION \(unmarkFunctionName)() RETURNS trigger LANGUAGE plpgsql AS $unmark$
      BEGIN
        UPDATE \(orders) AS f SET single = 0 FROM (
          SELECT o.app, o.event_id FROM \(orders) o WHERE o.single = 1 AND \(shared)
          ORDER BY o.app, o.event_id FOR UPDATE) AS l
        WHERE f.app = l.app AND f.event_id = l.event_id;
        UPDATE \(items) AS f SET single = 0 FROM (
          SELECT i.app, i.event_id, i.position FROM \(items) i WHERE i.single = 1
            AND (i.app, i.event_id) IN (SELECT o.app, o.event_id FROM \(orders) o WHERE \(shared))
          ORDER BY i.app, i.event_id, i.position FOR UPDATE) AS l
        WHERE f.app = l.app AND f.event_id = l.event_id AND f.position = l.position;
        RETURN NULL;
      END
      $unmark$
      """
  }
}
