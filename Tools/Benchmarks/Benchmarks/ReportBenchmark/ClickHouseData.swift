import CollectorClickHouse
import Foundation

/// The report benchmark's generated events in ClickHouse: the rows ``ReportBenchmark/insert(from:to:sqlite:table:)``
/// gives the SQL stores, written by ClickHouse itself from `numbers(…)`, with what the ClickHouse store
/// derives at insert (``ClickHouseFacts``: the top-level parameters as key and value arrays, the
/// purchase and refund facts in `orders` and `items`). The benchmark checks that every report answers
/// as SQLite does on the same size, so a difference between the two generators shows.
struct ClickHouseData {
  /// Every server (the one server, or each shard); the rows are inserted through the first (on a
  /// cluster, into its `Distributed` tables, which shard them by device as the store's inserts are).
  let servers: [ClickHouseClient]
  let database: String
  /// Whether the tables are sharded (each server's own rows are in `<table>_local`).
  let sharded: Bool

  /// Generates `size` events into `database` in steps of 1,000,000, as the SQL generator does (its
  /// device count depends on each step's end, so the steps are the same).
  func load(_ size: Int) async throws {
    // Through a `Distributed` table, an insert answers once every shard wrote its rows.
    let synchronous = ["insert_distributed_sync": "1"]
    let client = servers[0]
    var done = 0
    while done < size {
      let end = min(size, done + 1_000_000)
      for statement in Self.inserts(from: done, to: end, database: database) {
        try await client.execute(statement, settings: synchronous)
      }
      done = end
      if done % 10_000_000 == 0 || done == size { ReportBenchmark.log("  \(done)/\(size)") }
    }
    for server in servers {
      try await server.execute("OPTIMIZE TABLE \(database).events\(sharded ? "_local" : "") FINAL")
    }
    // The device-to-person table, as the store's migration fills it from stored events.
    try await client.execute(
      """
      INSERT INTO \(database).persons (app, device_id, person, first_ms, first_event)
      SELECT app, device_id, argMin(uid, (occurred_at, event_id)), min(occurred_at), argMin(event_id, (occurred_at, event_id))
      FROM (SELECT app, device_id, assumeNotNull(user_id) AS uid, occurred_at, event_id FROM \(database).events
            WHERE isNotNull(user_id))
      GROUP BY app, device_id
      """, settings: synchronous)
  }

  /// The generated rows `first..<end` as a subquery: `x`, the session, the device, the time, the
  /// event name and its context, by the SQL generator's formulas in ClickHouse's functions.
  static func generated(from first: Int, to end: Int) -> String {
    let devices = max(1, end / 100)
    let start = ReportBenchmark.start
    let day = ReportBenchmark.day
    let pick = "((x * 2654435761 + s) % 100)"
    return """
      SELECT x, s, d, t, name, \
      if(d % 2 = 0, 'iOS', 'Android') AS platform, \
      if(dd < 14 + d % 7, if(d % 3 = 0, '9.8', '9.9'), if(d % 5 = 0, '10.0-beta', '10.0')) AS version, \
      if(d % 2 = 0, if(d % 3 = 0, '17.4', '18.1'), '14') AS os \
      FROM (SELECT x, s, d, dd, \
      toInt64(\(start) + dd * \(day) + (((s * 7919) % 104729) % 24) * 3600000 + ((s * 31) % 1800000) + (x % 20) * 30000) AS t, \
      multiIf(x % 20 = 0, 'app_open', \(pick) < 40, 'screen_view', \(pick) < 62, 'product_viewed', \
      \(pick) < 72, 'search', \(pick) < 82, 'add_to_cart', \(pick) < 88, 'favorite', \(pick) < 93, 'checkout', \
      \(pick) < 96, 'purchase', \(pick) < 97, 'refund', 'share') AS name \
      FROM (SELECT x, s, (s * 2654435761) % \(devices) AS d, ((s * 40503) % 1000003) % 28 AS dd \
      FROM (SELECT toUInt64(number) AS x, intDiv(number, 20) AS s FROM numbers(\(first), \(end - first)))))
      """
  }

  /// The statements writing events `first..<end`: the events, then their orders and items.
  static func inserts(from first: Int, to end: Int, database: String) -> [String] {
    let rows = generated(from: first, to: end)
    let product = "concat('p', toString((x * 7) % 500))"
    // The SQL generator's users: two devices in five signed in for three events in four.
    let user = """
      if(d % 5 < 2 AND x % 4 != 0, CAST(concat('user-', toString(intDiv(d, 2))) AS Nullable(String)), \
      CAST(NULL AS Nullable(String)))
      """
    let transaction = "concat('T', toString(intDiv(x, 3)))"
    let currency = "if(x % 10 = 0, 'EUR', 'TRY')"
    let value = "concat(toString(x % 997), '.5')"
    let items = """
      concat('[{"item_id":"p', toString((x * 7) % 500), '","item_name":"Product ', toString((x * 7) % 500), \
      '","item_brand":"B', toString(x % 20), '","item_category":"C', toString(x % 12), '","price":', \
      toString(x % 97), '.5,"quantity":', toString(1 + x % 3), '},{"item_id":"p', toString((x * 11) % 500), \
      '","price":9.99,"quantity":1}]')
      """
    let order = """
      concat(',"transaction_id":"', \(transaction), '","currency":"', \(currency), '","value":', \(value))
      """
    let parameters = """
      concat('{"product_id":"', \(product), '"', \
      multiIf(name = 'purchase', concat(\(order), ',"items":', \(items)), name = 'refund', \(order), ''), '}')
      """
    let keys = """
      multiIf(name = 'purchase', ['product_id', 'transaction_id', 'currency', 'value', 'items'], \
      name = 'refund', ['product_id', 'transaction_id', 'currency', 'value'], ['product_id'])
      """
    let values = """
      multiIf(name = 'purchase', [\(product), \(transaction), \(currency), \(value), \(items)], \
      name = 'refund', [\(product), \(transaction), \(currency), \(value)], [\(product)])
      """
    let place = """
      'bench' AS app, t, concat('device-', toString(d)) AS device_id, \(user) AS user_id, \
      platform, version AS app_version, os AS os_version, concat('e-', toString(1000000000 + x)) AS event_id
      """
    let event = """
      INSERT INTO \(database).events (app, event_id, name, kind, occurred_at, utc_offset_minutes, received_at, \
      device_id, user_id, session_id, app_name, app_version, app_build, os_name, os_version, platform, device_model, \
      locale, library_name, library_version, parameters, param_keys, param_values) \
      SELECT 'bench', concat('e-', toString(1000000000 + x)), name, 'action', t, 0, t, concat('device-', toString(d)), \
      \(user), toInt64(s), 'Bench', version, '1', platform, os, platform, 'Model', 'en', \
      'CoreTracker', '1.0.0', \(parameters), \(keys), \(values) FROM (\(rows))
      """
    let orders = """
      INSERT INTO \(database).orders (app, t, device_id, user_id, platform, app_version, os_version, event_id, \
      purchase, k, currency, value) \
      SELECT \(place), toUInt8(name = 'purchase'), if(name = 'purchase', \(transaction), event_id), \(currency), \
      toFloat64(x % 997) + 0.5 FROM (\(rows)) WHERE name IN ('purchase', 'refund')
      """
    let itemColumns = """
      INSERT INTO \(database).items (app, t, device_id, user_id, platform, app_version, os_version, event_id, \
      position, k, currency, item, name, category, brand, price, quantity)
      """
    let firstItem = """
      \(itemColumns) SELECT \(place), toUInt32(0), \(transaction), \(currency), \(product), \
      CAST(concat('Product ', toString((x * 7) % 500)) AS Nullable(String)), \
      CAST(concat('C', toString(x % 12)) AS Nullable(String)), CAST(concat('B', toString(x % 20)) AS Nullable(String)), \
      CAST(toFloat64(x % 97) + 0.5 AS Nullable(Float64)), toFloat64(1 + x % 3) FROM (\(rows)) WHERE name = 'purchase'
      """
    let secondItem = """
      \(itemColumns) SELECT \(place), toUInt32(1), \(transaction), \(currency), concat('p', toString((x * 11) % 500)), \
      CAST(NULL AS Nullable(String)), CAST(NULL AS Nullable(String)), CAST(NULL AS Nullable(String)), \
      CAST(9.99 AS Nullable(Float64)), toFloat64(1) FROM (\(rows)) WHERE name = 'purchase'
      """
    return [event, orders, firstItem, secondItem]
  }
}
