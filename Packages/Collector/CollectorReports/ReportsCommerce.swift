import CollectorStore
import CollectorWire

/// Revenue and top items on the SQL engines: the JSON of `parameters` read with each dialect's own
/// functions (SQLite's `json_extract`/`json_each`, PostgreSQL's `jsonb` operators), never with text
/// from a client in the SQL.
extension SQLReports {
  /// Revenue per currency for the range and the range before, and per day of the range.
  public func revenue(_ filter: ReportFilter) async throws -> Revenue {
    async let current = revenueDays(filter)
    async let previous = revenueDays(filter.previous)
    let (days, before) = (try await current, try await previous)
    let figures = Self.totals(days)
    let currencies = figures.map(\.currency)
    var byDay: [String: DayFigures] = [:]
    for day in days { byDay["\(day.currency)\u{0}\(day.start)"] = day }
    var series: [Revenue.Day] = []
    for currency in currencies {
      var start = Self.floor(filter.from, 86_400_000)
      while start < filter.to {
        let day = byDay["\(currency)\u{0}\(start)"]
        series.append(Revenue.Day(start: start, currency: currency, orders: day?.orders ?? 0, net: day?.net ?? 0))
        start += 86_400_000
      }
    }
    return Revenue(current: figures, previous: Self.totals(before), days: series)
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
  }

  /// Orders and money per currency and UTC day: each purchase transaction once (its first event by
  /// id), each refund event. One pass over the purchase and refund events (the name index), each
  /// JSON field extracted once.
  private func revenueDays(_ filter: ReportFilter) async throws -> [DayFigures] {
    var sql = SQLBuilder(store.dialect)
    let json = CommerceJSON(dialect: store.dialect)
    let orders = json.orders(
      filter, names: "'purchase', 'refund'", table: store.eventsTable, fields: ["currency", "value"], &sql)
    let found = try await rows(
      "SELECT (t / 86400000) * 86400000 AS day, currency, sum(purchase) AS orders, sum(purchase * v) AS gross, "
        + "sum(1 - purchase) AS refund_count, sum((1 - purchase) * v) AS refunds FROM ("
        + "SELECT CASE WHEN name = 'purchase' THEN 1 ELSE 0 END AS purchase, "
        + "coalesce(\(json.text("currency")), '') AS currency, coalesce(\(json.money("value")), 0) AS v, t "
        + "FROM (\(orders)) o WHERE first = 1\(json.fence)) m GROUP BY 1, 2 ORDER BY 1, 2", sql)
    return found.map { row in
      DayFigures(
        start: row["day"].int ?? 0, currency: row["currency"].text ?? "", orders: row["orders"].int ?? 0,
        gross: row["gross"].double ?? 0, refundCount: row["refund_count"].int ?? 0, refunds: row["refunds"].double ?? 0)
    }
  }

  /// The items of purchases with the most revenue, optionally of one category or brand.
  public func topItems(_ filter: ReportFilter, category: String?, brand: String?, limit: Int) async throws -> TopItems {
    if let category { try ReportText.check(category, field: "category") }
    if let brand { try ReportText.check(brand, field: "brand") }
    var sql = SQLBuilder(store.dialect)
    let json = CommerceJSON(dialect: store.dialect)
    let orders = json.orders(
      filter, names: "'purchase'", table: store.eventsTable, fields: ["currency", "items"], &sql)
    var itemFields = ["item_id", "item_name", "price", "quantity"]
    var conditions: [String] = []
    if let category {
      itemFields.append("item_category")
      conditions.append("\(json.text("item_category")) = \(sql.bind(category))")
    }
    if let brand {
      itemFields.append("item_brand")
      conditions.append("\(json.text("item_brand")) = \(sql.bind(brand))")
    }
    let items = json.items(of: orders, fields: itemFields)
    let found = try await rows(
      "SELECT item, substr(max(stamped), 16) AS name, currency, sum(quantity) AS units, "
        + "sum(quantity * coalesce(price, 0)) AS revenue, count(DISTINCT k) AS orders, "
        + "count(DISTINCT device_id) AS buyers FROM ("
        + "SELECT coalesce(\(json.text("item_id")), \(json.text("item_name"))) AS item, "
        + "\(json.stamped(name: json.text("item_name"))) AS stamped, "
        + "coalesce(\(json.text("currency")), '') AS currency, coalesce(\(json.money("quantity")), 1) AS quantity, "
        + "\(json.money("price")) AS price, k, device_id FROM (\(items)) x "
        + "WHERE \((["first = 1"] + conditions).joined(separator: " AND "))\(json.fence)) p "
        + "WHERE item IS NOT NULL AND quantity >= 1 GROUP BY item, currency "
        + "ORDER BY revenue DESC, item, currency LIMIT \(sql.bind(Int64(max(1, limit))))", sql)
    return TopItems(
      category: category, brand: brand,
      rows: found.map { row in
        TopItems.Row(
          item: row["item"].text ?? "", name: row["name"].text ?? "", currency: row["currency"].text ?? "",
          units: row["units"].int ?? 0, revenue: row["revenue"].double ?? 0, orders: row["orders"].int ?? 0,
          buyers: row["buyers"].int ?? 0)
      })
  }
}
