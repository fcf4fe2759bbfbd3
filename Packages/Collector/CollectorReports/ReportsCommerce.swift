public import CollectorStore
package import CollectorWire

/// Revenue and top items on the SQL engines: read from the store's commerce facts
/// (`rollup_orders`, `rollup_items`; ``CommerceSQL``), typed columns kept with the events, never with
/// text from a client in the SQL.
extension SQLReports {
  public func revenueDays(_ filter: ReportFilter) async throws -> [SQLRow] {
    var sql = SQLBuilder(store.dialect)
    let orders = firsts(filter, \.orders, purchases: false, &sql)
    let found = try await rows(
      "SELECT \(filter.zone.bucketSQL("t", .day, from: filter.from, to: filter.to) { "(\($0) / \($1))" }) AS day, "
        + "currency, sum(purchase) AS orders, sum(purchase * value) AS gross, "
        + "sum(1 - purchase) AS refund_count, sum((1 - purchase) * value) AS refunds FROM (\(orders)) o "
        + "GROUP BY 1, 2 ORDER BY 1, 2", sql)
    return found
  }

  /// The order or item facts (``CommerceSQL``) of `filter` that belong to the first event by id of
  /// their transaction key among the orders of `filter` (purchases only when `purchases`): a
  /// purchase tracked twice counts once. Read from the store's fact tables when it keeps them and
  /// rollups are on (an index probe per row for an earlier order of the same key, where the store
  /// cannot tell that no other order has it: ``SQLDialect/singleOrderMarks``), else extracted
  /// from the events (the relation the tables are filled from, so both answer alike). `byItem`: the
  /// item facts are read through their index by item (``SQLDialect/indexesRollupsByKey``).
  private func firsts(
    _ filter: ReportFilter, _ table: KeyPath<RollupTables, String>, purchases: Bool, byItem: Bool = false,
    _ sql: inout SQLBuilder
  ) -> String {
    let purchase = purchases ? " AND o.purchase = 1" : ""
    if usesRollups, let tables = store.rollups {
      let earlier =
        "NOT EXISTS (SELECT 1 FROM \(tables.orders) o WHERE \(sql.msConditions(filter, column: "t", prefix: "o.")) "
        + "AND o.k = f.k AND o.event_id < f.event_id\(purchase))"
      // A fact whose key no other order has (`single`) needs no probe.
      let first = "(f.single = 1 OR \(earlier))"
      // Read by item, the bounds are no index's and the partial index's term is named.
      let conditions = sql.msConditions(filter, column: "t", prefix: "f.", unindexed: byItem)
      return "SELECT * FROM \(tables[keyPath: table]) f WHERE \(conditions)\(byItem ? " AND f.quantity >= 1" : "") "
        + "AND \(first)"
    }
    let facts = CommerceSQL(dialect: store.dialect)
    let conditions = sql.conditions(filter)
    let relation =
      table == \RollupTables.orders
      ? facts.orders(from: store.eventsTable, where: conditions)
      : facts.items(from: store.eventsTable, where: conditions)
    return "SELECT f.* FROM (\(relation)) f JOIN (SELECT min(event_id) AS first_id FROM ("
      + "\(facts.orders(from: store.eventsTable, where: conditions))) o WHERE true\(purchase) GROUP BY k) o "
      + "ON o.first_id = f.event_id"
  }

  /// The items of purchases with the most revenue, optionally of one category or brand.
  public func topItemRows(_ filter: ReportFilter, category: String?, brand: String?, limit: Int) async throws
    -> [SQLRow]
  {
    // Over most of the app's stored time, the items are read in item order: no sort of every item.
    var byItem = false
    if usesRollups, let tables = store.rollups {
      byItem = try await readsRollupByKey(filter, from: tables.items, time: "t", width: 1)
    }
    var sql = SQLBuilder(store.dialect)
    let items = firsts(filter, \.items, purchases: true, byItem: byItem, &sql)
    var conditions = ["true"]
    // A category matches any level of an item's category path (`Kitchen` in `Home > Kitchen`).
    if let category { conditions.append(CommerceSQL.hasCategoryLevel("category", sql.bind(category))) }
    if let brand { conditions.append("brand = \(sql.bind(brand))") }
    let dialect = store.dialect
    // Grouped byte by byte: the same groups, sorted without the collation (PostgreSQL: 1.1x at 10M).
    let (item, currency) = (dialect.bytewise("item"), dialect.bytewise("currency"))
    let top =
      "SELECT \(item) AS item, \(currency) AS currency, max(t) AS latest, sum(quantity) AS units, "
      + "sum(quantity * coalesce(price, 0)) AS revenue, count(DISTINCT \(dialect.bytewise("k"))) AS orders, "
      + "count(DISTINCT \(dialect.bytewise("device_id"))) AS buyers FROM (\(items)) i "
      + "WHERE \(conditions.joined(separator: " AND ")) GROUP BY \(item), \(currency) "
      + "ORDER BY revenue DESC, item, currency LIMIT \(sql.bind(Int64(max(1, limit))))"
    // The latest name (the largest, byte by byte, of the latest time's), looked up for the top
    // items only: an index probe each, where taking it from every item row cost a fifth of the
    // report at 10M (Docs/Benchmarks.md).
    let named = firsts(filter, \.items, purchases: true, &sql)
    let name =
      "SELECT max(\(dialect.bytewise("coalesce(n.name, '')"))) FROM (\(named)) n WHERE "
      + (conditions + ["n.item = g.item", "n.currency = g.currency", "n.t = g.latest"]).joined(separator: " AND ")
    return try await rows(
      "SELECT item, (\(name)) AS name, currency, units, revenue, orders, buyers FROM (\(top)) g "
        + "ORDER BY revenue DESC, item, currency", sql)
  }
}

extension Revenue {
  /// Revenue from rows of (`day`, `currency`, `orders`, `gross`, `refund_count`, `refunds`) of the
  /// range (`days`) and of the range before (`before`).
  package init(_ filter: ReportFilter, days found: [SQLRow], before: [SQLRow]) {
    // Rows name the local day (the filter's zone); the series starts each at its first instant.
    let days = found.map { DayFigures($0, zone: filter.zone) }
    let figures = Self.totals(days)
    let currencies = figures.map(\.currency)
    let earlier = before.map { DayFigures($0, zone: filter.zone) }
    self.init(
      current: figures, previous: Self.totals(earlier), days: Self.series(days, currencies, filter),
      previousDays: Self.series(earlier, currencies, filter.previous))
  }

  /// Every day of `filter`'s range for each of `currencies`, in order, from `days` (0 where none).
  private static func series(_ days: [DayFigures], _ currencies: [String], _ filter: ReportFilter) -> [Revenue.Day] {
    var byDay: [String: DayFigures] = [:]
    for day in days { byDay["\(day.currency)\u{0}\(day.start)"] = day }
    var series: [Revenue.Day] = []
    for currency in currencies {
      for (_, start) in filter.zone.buckets(from: filter.from, to: filter.to, .day) {
        let day = byDay["\(currency)\u{0}\(start)"]
        series.append(Revenue.Day(start: start, currency: currency, orders: day?.orders ?? 0, net: day?.net ?? 0))
      }
    }
    return series
  }

  /// Figures per currency (largest gross first) from per-day figures.
  private static func totals(_ days: [DayFigures]) -> [Revenue.Figures] {
    var totals: [String: Revenue.Figures] = [:]
    for day in days {
      var figures =
        totals[day.currency] ?? Revenue.Figures(currency: day.currency, orders: 0, gross: 0, refundCount: 0, refunds: 0)
      figures.orders += day.orders
      figures.gross += day.gross
      figures.refundCount += day.refundCount
      figures.refunds += day.refunds
      totals[day.currency] = figures
    }
    return totals.values.sorted { ($0.gross, $1.currency) > ($1.gross, $0.currency) }
  }

  private struct DayFigures {
    var start: Int64
    var currency: String
    var orders: Int64
    var gross: Double
    var refundCount: Int64
    var refunds: Double
    var net: Double { gross - refunds }

    init(_ row: SQLRow, zone: ReportZone) {
      start = zone.start(ofDay: row["day"].int ?? 0)
      currency = row["currency"].text ?? ""
      orders = row["orders"].int ?? 0
      gross = row["gross"].double ?? 0
      refundCount = row["refund_count"].int ?? 0
      refunds = row["refunds"].double ?? 0
    }
  }
}

extension TopItems {
  /// Throws ``FieldError`` for a category or brand that is not report text.
  package static func check(category: String?, brand: String?) throws(FieldError) {
    if let category { try ReportText.check(category, field: "category") }
    if let brand { try ReportText.check(brand, field: "brand") }
  }

  /// Top items from rows of (`item`, `name`, `currency`, `units`, `revenue`, `orders`, `buyers`).
  package init(_ found: [SQLRow], category: String?, brand: String?) {
    self.init(
      category: category, brand: brand,
      rows: found.map { row in
        TopItems.Row(
          item: row["item"].text ?? "", name: row["name"].text ?? "", currency: row["currency"].text ?? "",
          units: row["units"].int ?? 0, revenue: row["revenue"].double ?? 0, orders: row["orders"].int ?? 0,
          buyers: row["buyers"].int ?? 0)
      })
  }
}
