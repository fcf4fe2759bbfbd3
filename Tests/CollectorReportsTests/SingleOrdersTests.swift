import CollectorPostgres
import CollectorReports
import CollectorStore
import CollectorWire
import TestSupport
import Testing

/// The SQL stores' commerce facts say which orders have a transaction key of their own (`single`,
/// ``SQLDialect/singleOrderMarks``: SQLite's every write, PostgreSQL's device-set build with a
/// trigger unmarking), so revenue and top items skip the probe for an earlier order of the same key
/// there. A 1 on an order whose key another order has would count a transaction twice; a 0 on one
/// whose key is alone only costs the probe.
@Suite("Single orders are marked exactly")
struct SingleOrdersTests {
  /// The orders marked single whose key another order has (always wrong), the orders alone with
  /// their key but not marked (the probe kept), the items marked unlike their order, and how many
  /// orders are single and how many share their key.
  static func marks(_ store: any BulkLoading) async throws -> (
    wrong: Int64, unmarked: Int64, items: Int64, single: Int64, shared: Int64
  ) {
    let rollups = try #require(store.rollups)
    let others =
      "EXISTS (SELECT 1 FROM \(rollups.orders) o WHERE o.app = f.app AND o.k = f.k AND o.event_id <> f.event_id)"
    let row = try await store.read(
      "SELECT (SELECT count(*) FROM \(rollups.orders) f WHERE single = 1 AND \(others)) AS wrong, "
        + "(SELECT count(*) FROM \(rollups.orders) f WHERE single = 0 AND NOT \(others)) AS unmarked, "
        + "(SELECT count(*) FROM \(rollups.items) f JOIN \(rollups.orders) o ON o.app = f.app "
        + "AND o.event_id = f.event_id WHERE o.single <> f.single) AS items, "
        + "(SELECT count(*) FROM \(rollups.orders) f WHERE single = 1) AS single, "
        + "(SELECT count(*) FROM \(rollups.orders) f WHERE \(others)) AS shared", []
    ).first
    return (
      row?["wrong"].int ?? -1, row?["unmarked"].int ?? -1, row?["items"].int ?? -1, row?["single"].int ?? -1,
      row?["shared"].int ?? -1
    )
  }

  /// Ingest in batches (a few transaction ids recur across devices and batches, under ids that sort
  /// before and after the first one's), an order sent later under an earlier key, erasure, pruning
  /// and a rebuild: no order is ever marked single when another has its key; after ingest and the
  /// rebuild, once the hours are built, every order alone with its key is marked; items follow their
  /// order throughout.
  @Test(arguments: Engine.sql)
  func marksFollowEveryChangeToTheOrders(engine: Engine) async throws {
    let store = try await engine.open(Generated.batches)
    let keeper = try #require(store as? any DeviceSetKeeping)
    var found = try await Self.marks(store)
    #expect(found.wrong == 0 && found.items == 0)
    if store.dialect.singleOrderMarks == .byBuild { #expect(found.single == 0) }
    try await keeper.buildDeviceSets(before: .max)
    found = try await Self.marks(store)
    #expect(found == (0, 0, 0, found.single, found.shared))
    #expect(found.single > 20 && found.shared > 5)
    try await RollupEquivalenceTests.expectSame(store, "every hour built and marked")

    // A purchase under the key of an order that was alone turns both to shared. Its id sorts before
    // every generated one, so a mark left on the other order would count the transaction twice.
    let orders = try #require(store.rollups).orders
    let alone = try #require(
      try await store.read(
        "SELECT k FROM \(orders) WHERE app = 'shop' AND single = 1 AND purchase = 1 ORDER BY event_id LIMIT 1", []
      ).first)
    let key = try #require(alone["k"].text)
    _ = try await store.write(StoreBatch(events: [Self.purchase(key: key)]))
    let before = found
    found = try await Self.marks(store)
    #expect(found == (0, 0, 0, before.single - 1, before.shared + 2))
    try await RollupEquivalenceTests.expectSame(store, "after a later order under a single key")

    // Erasure and pruning may leave a shared mark where the key is now alone, never the reverse.
    #expect(try await store.erase(ErasureSubject(app: "shop", deviceID: "device-again", userID: nil)!).rows > 0)
    let day: Int64 = 86_400_000
    #expect(
      try await store.prune(PruneCutoffs(defaultCutoff: Generated.start + 2 * day + 90 * 60_000, perApp: [:])) > 0)
    found = try await Self.marks(store)
    #expect(found.wrong == 0 && found.items == 0)
    #expect(found.unmarked > 0)

    #expect(try await store.rebuildRollups() > 0)
    try await keeper.buildDeviceSets(before: .max)
    found = try await Self.marks(store)
    #expect(found == (0, 0, 0, found.single, found.shared))
    try await RollupEquivalenceTests.expectSame(store, "rebuilt and marked")
    try await store.close()
  }

  /// Two writes at once, each adding orders under the same keys, marked alone until then (in the
  /// other's order, under ids sorting before the first orders'):
  /// whichever commits first, no key ends with a mark while another order has it (PostgreSQL's
  /// trigger unmarks in the order of the keys, so the two never wait on each other's rows).
  @Test(arguments: Engine.sql)
  func writesAtOnceLeaveNoKeyMarkedTwice(engine: Engine) async throws {
    let store = try await engine.open(Generated.batches)
    let keeper = try #require(store as? any DeviceSetKeeping)
    try await keeper.buildDeviceSets(before: .max)
    let orders = try #require(store.rollups).orders
    let keys = try await store.read(
      "SELECT k FROM \(orders) WHERE app = 'shop' AND single = 1 AND purchase = 1 ORDER BY k LIMIT 8", []
    ).compactMap { $0["k"].text }
    #expect(keys.count == 8)
    let first = StoreBatch(events: keys.enumerated().map { Self.purchase(key: $1, id: "-a-\($0)") })
    let second = StoreBatch(events: keys.reversed().enumerated().map { Self.purchase(key: $1, id: "-b-\($0)") })
    async let one = store.write(first)
    async let two = store.write(second)
    _ = try await (one, two)
    let found = try await Self.marks(store)
    #expect(found.wrong == 0 && found.items == 0 && found.unmarked == 0)
    try await RollupEquivalenceTests.expectSame(store, "after two writes at once")
    try await store.close()
  }

  /// A PostgreSQL store upgraded to migrations 19 to 22 with its orders stored and its hours built:
  /// the migrations mark nothing (their `ALTER TABLE`s hold writes off only for their own time) and
  /// keep every built hour, every report still equals the events', and the next build marks the
  /// orders of every hour built before, an hour at a time.
  @Test(.enabled(if: PostgresTestServer.url != nil))
  func theUpgradeLeavesTheMarksToTheBuild() async throws {
    let store = try PostgresEventStore(url: PostgresTestServer.url!, schema: PostgresTestServer.uniqueSchema("reports"))
    try await store.migrate()
    try #require(try await store.schemaVersion() == 22, "the upgrade below undoes migrations 19 to 22 alone")
    for batch in Generated.batches { _ = try await store.write(batch) }
    try await store.buildDeviceSets(before: .max)
    let (rollups, sets) = (try #require(store.rollups), try #require(store.deviceSets))
    let schema = String(rollups.orders.prefix { $0 != "." })
    let builtHours = "SELECT count(*) AS n FROM \(sets.hours)"
    let built = try #require(try await store.read(builtHours, []).first?["n"].int)
    #expect(try await Self.marks(store).single > 20)
    for statement in [
      "DROP INDEX \(schema).rollup_items_by_item",
      "DROP INDEX \(schema).rollup_sessions_by_device",
      "CREATE INDEX rollup_sessions_app_device ON \(rollups.sessions) (app, device_id, hour)",
      "DROP TABLE \(schema).single_order_hours_unmarked",
      "DROP TRIGGER rollup_orders_unmark_single ON \(rollups.orders)",
      "DROP FUNCTION \(schema).rollup_orders_unmark_single()",
      "ALTER TABLE \(rollups.orders) DROP COLUMN single", "ALTER TABLE \(rollups.items) DROP COLUMN single",
      "DELETE FROM \(schema).schema_migrations WHERE version >= 19",
    ] {
      try await store.execute(statement)
    }

    try await store.migrate()
    #expect(try await store.read(builtHours, []).first?["n"].int == built)
    let upgraded = try await Self.marks(store)
    #expect(upgraded.wrong == 0 && upgraded.items == 0 && upgraded.single == 0 && upgraded.unmarked > 20)
    try await RollupEquivalenceTests.expectSame(store, "upgraded, nothing marked")
    #expect(try await store.buildDeviceSets(before: .max) == 0)
    let found = try await Self.marks(store)
    #expect(found == (0, 0, 0, found.single, found.shared) && found.single > 20)
    let waiting = "SELECT count(*) AS n FROM \(schema).single_order_hours_unmarked"
    #expect(try await store.read(waiting, []).first?["n"].int == 0)
    try await RollupEquivalenceTests.expectSame(store, "upgraded and marked")
    try await store.close()
  }

  /// A purchase of one item under the transaction id `key`, an hour into the generated days; its
  /// id sorts before every generated event's (`-`).
  static func purchase(key: String, id: String = "-again") -> StoredEvent {
    StoredEvent(
      app: "shop", eventID: id, name: "purchase", kind: "action", occurredAt: Generated.start + 3_600_000,
      utcOffsetMinutes: 0, receivedAt: Generated.start, deviceID: "device-again", userID: nil, sessionID: 1,
      context: EventContext([
        .appName: "Shop", .appVersion: "10.0", .osName: "iOS", .osVersion: "18.1", .platform: "iOS",
      ]),
      parametersJSON:
        #"{"transaction_id":"\#(key)","currency":"TRY","value":10,"items":[{"item_id":"p1","quantity":1}]}"#)
  }
}
