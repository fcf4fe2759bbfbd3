import CollectorReports
import CollectorStore

/// Top items from the closed days (migration 11): each build also sums the purchased items of its
/// days per (day, item, currency), so that top items reads a few hundred rows per day instead of
/// every item row of the range (at 100M events, 5.7M rows grouped with two distinct counts).
///
/// An item counts from its transaction's first purchase (by id) among the range's orders. In a
/// build, a purchase whose key's hash is seen once in all its days (`alone`: nearly all) is its
/// key's first in any range holding it, unless the key is bought again outside the build; its items
/// are summed per day (units, revenue, orders, the latest name) and its buyers kept as a day mask
/// per (item, currency, device). The purchases of the other keys (`closed_repeat_orders`) and their
/// items (`closed_repeat_items`) are kept as rows, and grouped with the rest of the range as the
/// facts are (``ClickHouseReports/topItemRows(_:category:brand:limit:)``).
///
/// Built once on the server reads go to, from every shard's facts (a key may be sent from two
/// devices, so from two shards), and read from there alone.
extension ClickHouseSchema {
  /// The tables of migration 11, on each server and filled on the first (`shardBy` unused).
  static let closedItems = [
    closed("closed_commerce_days", "day Int64, orders UInt64, items UInt64", order: "day"),
    closed("closed_purchases", "day Int64, key UInt64, event UInt64, alone UInt8", order: "alone, key"),
    closed(
      "closed_item_days",
      "day Int64, item String, currency String, units Float64, revenue Float64, orders UInt64, latest String",
      order: "day, item, currency"),
    closed(
      "closed_item_buyers", "item String, currency String, device UInt64, days UInt64",
      order: "item, currency, device"),
    closed("closed_repeat_orders", "day Int64, t Int64, event_id String, k String", order: "day"),
    closed(
      "closed_repeat_items",
      "day Int64, " + repeatItemColumns.map { "\($0.name) \($0.type)" }.joined(separator: ", "),
      order: "day"),
  ]

  /// What top items reads of `items`, kept for repeated keys: each column's name, type and value
  /// from `items` (the device as its hash, as every report counts it: no device id is copied).
  static let repeatItemColumns: [(name: String, type: String, value: String)] = [
    ("t", "Int64", "t"), ("k", "String", "k"), ("device", "UInt64", "cityHash64(device_id)"),
    ("event_id", "String", "event_id"), ("item", "String", "item"), ("name", "Nullable(String)", "name"),
    ("currency", "String", "currency"), ("price", "Nullable(Float64)", "price"), ("quantity", "Float64", "quantity"),
  ]

  /// ``repeatItemColumns`` read from `items`.
  static let repeatItemValues = repeatItemColumns.map { "\($0.value) AS \($0.name)" }.joined(separator: ", ")

  /// Migration 11: the tables of the items' closed days, on each server (only the first's are filled).
  var closedItemsMigration: [String] {
    Self.closedItems.map { "CREATE TABLE IF NOT EXISTS \(local($0.name)) (\($0.columns)) ENGINE = \($0.engine)" }
  }

  /// An item's latest name (by time, then name) as text that sorts by time: the time behind a fixed
  /// 16-digit offset, then the name (from the 17th character), as on the SQL engines.
  static let latestName = "max(concat(toString(t + 2000000000000000), ifNull(name, '')))"

  /// The statements filling build `id`'s items of `days` on the first server, from every shard's
  /// facts, in order: the days' rows counted first, so that an order or item stored during the
  /// build makes its day read from the facts; the purchases once, so every later table agrees on
  /// which keys are alone.
  func closedItemsBuild(id: Int64, days: ClosedRange<Int64>) -> [String] {
    let day = Self.dayLength
    let inDays =
      "t >= \(days.lowerBound * day) AND t < \((days.upperBound + 1) * day) "
      + "AND day >= \(Self.days([days.lowerBound * day])) AND day <= \(Self.days([days.upperBound * day]))"
    func purchases(alone: Int) -> String {
      "(app, cityHash64(event_id)) GLOBAL IN "
        + "(SELECT app, event FROM \(local("closed_purchases")) WHERE build = \(id) AND alone = \(alone))"
    }
    return [
      """
      INSERT INTO \(local("closed_commerce_days")) SELECT \(id), app, d, sum(o), sum(i) FROM (
        SELECT app, intDiv(t, \(day)) AS d, toUInt64(1) AS o, toUInt64(0) AS i FROM \(orders) WHERE \(inDays)
        UNION ALL
        SELECT app, intDiv(t, \(day)) AS d, toUInt64(0) AS o, toUInt64(1) AS i FROM \(items) WHERE \(inDays))
      GROUP BY app, d
      """,
      """
      INSERT INTO \(local("closed_purchases")) SELECT \(id), app, tupleElement(x, 1), key, tupleElement(x, 2),
        toUInt8(length(per) = 1)
      FROM (SELECT app, cityHash64(k) AS key, groupArray((intDiv(t, \(day)), cityHash64(event_id))) AS per
        FROM \(orders) WHERE \(inDays) AND purchase = 1 GROUP BY app, key)
      ARRAY JOIN per AS x
      """,
      """
      INSERT INTO \(local("closed_item_days")) SELECT \(id), app, intDiv(t, \(day)) AS d, item, currency,
        sum(quantity), sum(quantity * ifNull(price, 0)), uniqExact(cityHash64(k)), \(Self.latestName)
      FROM \(items) WHERE \(inDays) AND \(purchases(alone: 1)) GROUP BY app, d, item, currency
      """,
      """
      INSERT INTO \(local("closed_item_buyers")) SELECT \(id), app, item, currency, cityHash64(device_id) AS device,
        groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(intDiv(t, \(day)) - \(days.lowerBound))))
      FROM \(items) WHERE \(inDays) AND \(purchases(alone: 1)) GROUP BY app, item, currency, device
      """,
      """
      INSERT INTO \(local("closed_repeat_orders")) SELECT \(id), app, intDiv(t, \(day)), t, event_id, k
      FROM \(orders) WHERE \(inDays) AND purchase = 1 AND \(purchases(alone: 0))
      """,
      """
      INSERT INTO \(local("closed_repeat_items")) SELECT \(id), app, intDiv(t, \(day)), \(Self.repeatItemValues)
      FROM \(items) WHERE \(inDays) AND \(purchases(alone: 0))
      """,
    ]
  }
}

extension ClickHouseReports {
  /// The top items of `filter` (no category or brand) from the closed days, or `nil` when they do
  /// not answer it: a build's whole UTC days of the range whose orders and items are as built
  /// (``closedItemDays(_:)``) summed, every other order and item of the range, and the repeated
  /// keys' of those days, grouped as the facts are; the buyers are the built masks' devices not
  /// among the others' and theirs.
  func closedTopItems(_ filter: ReportFilter, limit: Int) async throws -> [SQLRow]? {
    guard let (build, days) = try await closedItemDays(filter) else { return nil }
    let ofBuild = "build = \(build.id) AND app = \(ClickHouseSQL.literal(filter.storedApp))"
    let list = ClickHouseSQL.list(days)
    let rest = Self.restTimes(filter, days)
    let orders = """
      SELECT k, event_id, purchase, t FROM \(schema.orders) WHERE \(rest)
      UNION ALL
      SELECT k, event_id, toUInt8(1) AS purchase, t FROM \(schema.local("closed_repeat_orders"))
      WHERE \(ofBuild) AND day IN \(list)
      """
    let first = try await firstPurchaseItems(orders: "FROM (\(orders)) WHERE 1")
    let columns = ClickHouseSchema.repeatItemColumns.map(\.name).joined(separator: ", ")
    let counted = """
      SELECT * FROM (
        SELECT \(ClickHouseSchema.repeatItemValues) FROM \(schema.items) WHERE \(rest)
        UNION ALL
        SELECT \(columns) FROM \(schema.local("closed_repeat_items")) WHERE \(ofBuild) AND day IN \(list))
      WHERE \(first)
      """
    let parts = """
      SELECT item, currency, latest, units AS u, revenue AS r, orders AS o, toUInt64(0) AS b
      FROM \(schema.local("closed_item_days")) WHERE \(ofBuild) AND day IN \(list)
      UNION ALL
      SELECT item, currency, '' AS latest, toFloat64(0) AS u, toFloat64(0) AS r, toUInt64(0) AS o, count() AS b
      FROM \(schema.local("closed_item_buyers")) WHERE \(ofBuild) AND bitAnd(days, toUInt64(\(build.mask(days)))) != 0
        AND cityHash64(item, currency, device) NOT IN
          (SELECT cityHash64(item, currency, device) FROM (\(counted)))
      GROUP BY item, currency
      UNION ALL
      SELECT item, currency, \(ClickHouseSchema.latestName) AS latest, sum(quantity) AS u,
        sum(quantity * ifNull(price, 0)) AS r, uniqExact(cityHash64(k)) AS o, uniqExact(device) AS b
      FROM (\(counted)) GROUP BY item, currency
      """
    return try await rows(
      "SELECT item, substring(max(latest), 17, 1000000) AS name, currency, sum(u) AS units, sum(r) AS revenue, "
        + "toInt64(sum(o)) AS orders, toInt64(sum(b)) AS buyers FROM (\(parts)) "
        + "GROUP BY item, currency ORDER BY revenue DESC, item, currency LIMIT \(max(1, limit))")
  }

  /// The newest build and the whole UTC days of `filter`'s range whose items it sums: days whose
  /// orders and items are as many as built, less any day holding a purchase alone in the build
  /// whose key is bought again in the rest of the range (that purchase may not be the key's first
  /// there). `nil` when they are less than half the range, or the filter has a platform or version.
  private func closedItemDays(_ filter: ReportFilter) async throws -> CleanDays? {
    guard usesRollups, Self.dimensions(filter).isEmpty, let build = try await Self.closedBuild(client, schema),
      let whole = build.wholeDays(of: filter)
    else { return nil }
    let day = ClickHouseSchema.dayLength
    let app = ClickHouseSQL.literal(filter.storedApp)
    let facts = Self.times(filter, whole.lowerBound * day..<(whole.upperBound + 1) * day)
    let changed = Set(
      try await rows(
        """
        SELECT d, sum(o) AS o, sum(i) AS i FROM (
          SELECT intDiv(t, \(day)) AS d, toInt64(count()) AS o, toInt64(0) AS i FROM \(schema.orders) WHERE \(facts)
          GROUP BY d
          UNION ALL
          SELECT intDiv(t, \(day)) AS d, toInt64(0) AS o, toInt64(count()) AS i FROM \(schema.items) WHERE \(facts)
          GROUP BY d
          UNION ALL
          SELECT day AS d, -toInt64(orders) AS o, -toInt64(items) AS i FROM \(schema.local("closed_commerce_days"))
          WHERE build = \(build.id) AND app = \(app) AND day >= \(whole.lowerBound) AND day <= \(whole.upperBound))
        GROUP BY d HAVING o != 0 OR i != 0
        """
      ).compactMap { $0["d"].int })
    var clean = whole.filter { !changed.contains($0) }
    if !clean.isEmpty, !Self.restRanges(from: filter.from, to: filter.to, outside: clean).isEmpty {
      let boughtAgain = Set(
        try await rows(
          """
          SELECT DISTINCT day AS d FROM \(schema.local("closed_purchases"))
          WHERE build = \(build.id) AND app = \(app) AND alone = 1 AND day IN \(ClickHouseSQL.list(clean))
            AND key IN (SELECT cityHash64(k) FROM \(schema.orders) WHERE \(Self.restTimes(filter, clean)) AND purchase = 1)
          """
        ).compactMap { $0["d"].int })
      clean.removeAll { boughtAgain.contains($0) }
    }
    return Self.mostlyCovered(filter, by: clean) ? (build, clean) : nil
  }

  /// The facts (orders or items) of `filter`'s app in its range outside the UTC days `days`, as one
  /// parenthesised condition.
  static func restTimes(_ filter: ReportFilter, _ days: [Int64]) -> String {
    let ranges = restRanges(from: filter.from, to: filter.to, outside: days).map { "(\(times(filter, $0)))" }
    return "(\(ranges.isEmpty ? "0" : ranges.joined(separator: " OR ")))"
  }

  /// The facts of `filter` in `range` (ms) instead of its own range (``conditions(_:time:dated:)``).
  private static func times(_ filter: ReportFilter, _ range: Range<Int64>) -> String {
    var part = filter
    (part.from, part.to) = (range.lowerBound, range.upperBound)
    return conditions(part, time: "t")
  }
}
