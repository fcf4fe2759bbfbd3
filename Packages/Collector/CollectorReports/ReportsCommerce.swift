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
  /// id), each refund event.
  private func revenueDays(_ filter: ReportFilter) async throws -> [DayFigures] {
    var sql = SQLBuilder(store.dialect)
    let json = CommerceJSON(dialect: store.dialect)
    let conditions = sql.conditions(filter, prefix: "e.")
    let firsts = firstPurchases(filter, &sql)
    let found = try await rows(
      "SELECT (t / 86400000) * 86400000 AS day, currency, sum(purchase) AS orders, sum(purchase * v) AS gross, "
        + "sum(1 - purchase) AS refund_count, sum((1 - purchase) * v) AS refunds FROM ("
        + "SELECT CASE WHEN e.name = 'purchase' THEN 1 ELSE 0 END AS purchase, "
        + "coalesce(\(json.text("e.parameters", "currency")), '') AS currency, "
        + "coalesce(\(json.money("e.parameters", "value")), 0) AS v, \(sql.ms("e.occurred_at")) AS t "
        + "FROM \(store.eventsTable) e WHERE \(conditions) AND (e.name = 'refund' OR e.event_id IN (\(firsts)))) o "
        + "GROUP BY 1, 2 ORDER BY 1, 2", sql)
    return found.map { row in
      DayFigures(
        start: row["day"].int ?? 0, currency: row["currency"].text ?? "", orders: row["orders"].int ?? 0,
        gross: row["gross"].double ?? 0, refundCount: row["refund_count"].int ?? 0, refunds: row["refunds"].double ?? 0)
    }
  }

  /// The ids of the purchases that count: the first event (by id) of each transaction in the range.
  private func firstPurchases(_ filter: ReportFilter, _ sql: inout SQLBuilder) -> String {
    let json = CommerceJSON(dialect: store.dialect)
    return "SELECT min(event_id) FROM \(store.eventsTable) WHERE \(sql.conditions(filter)) AND name = 'purchase' "
      + "GROUP BY coalesce(\(json.text("parameters", "transaction_id")), event_id)"
  }

  /// The items of purchases with the most revenue, optionally of one category or brand.
  public func topItems(_ filter: ReportFilter, category: String?, brand: String?, limit: Int) async throws -> TopItems {
    if let category { try ReportText.check(category, field: "category") }
    if let brand { try ReportText.check(brand, field: "brand") }
    var sql = SQLBuilder(store.dialect)
    let json = CommerceJSON(dialect: store.dialect)
    var conditions = sql.conditions(filter, prefix: "e.") + " AND \(json.isObject("i.value"))"
    conditions += " AND e.event_id IN (\(firstPurchases(filter, &sql)))"
    if let category { conditions += " AND \(json.text("i.value", "item_category")) = \(sql.bind(category))" }
    if let brand { conditions += " AND \(json.text("i.value", "item_brand")) = \(sql.bind(brand))" }
    let found = try await rows(
      "SELECT item, substr(max(stamped), 16) AS name, currency, sum(quantity) AS units, "
        + "sum(quantity * coalesce(price, 0)) AS revenue, count(DISTINCT k) AS orders, "
        + "count(DISTINCT device_id) AS buyers FROM ("
        + "SELECT coalesce(\(json.text("i.value", "item_id")), \(json.text("i.value", "item_name"))) AS item, "
        + "\(json.stamped("i.value", time: sql.ms("e.occurred_at"))) AS stamped, "
        + "coalesce(\(json.text("e.parameters", "currency")), '') AS currency, "
        + "coalesce(\(json.money("i.value", "quantity")), 1) AS quantity, \(json.money("i.value", "price")) AS price, "
        + "e.event_id AS k, e.device_id AS device_id "
        + "FROM \(store.eventsTable) e \(json.items("e.parameters")) WHERE \(conditions)) p "
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

/// The JSON expressions of the commerce reports in one dialect. Keys are the reports' own constants.
struct CommerceJSON {
  let dialect: SQLDialect

  /// `document`'s `key` as text when it is a string, else `NULL`.
  func text(_ document: String, _ key: String) -> String {
    switch dialect {
    case .sqlite: "(CASE json_type(\(document), '$.\(key)') WHEN 'text' THEN json_extract(\(document), '$.\(key)') END)"
    case .postgres: "(CASE jsonb_typeof(\(document) -> '\(key)') WHEN 'string' THEN \(document) ->> '\(key)' END)"
    }
  }

  /// `document`'s `key` as a double when it is a number under 10^15 in size, else `NULL` (so a sum
  /// can never overflow or fail).
  func money(_ document: String, _ key: String) -> String {
    switch dialect {
    case .sqlite:
      "(CASE WHEN json_type(\(document), '$.\(key)') IN ('integer', 'real') "
        + "AND abs(json_extract(\(document), '$.\(key)')) < 1e15 THEN json_extract(\(document), '$.\(key)') END)"
    case .postgres:
      "(CASE WHEN jsonb_typeof(\(document) -> '\(key)') = 'number' "
        + "AND abs((\(document) ->> '\(key)')::numeric) < 1e15 THEN (\(document) ->> '\(key)')::double precision END)"
    }
  }

  /// Whether `value` (an element of `items`) is an object.
  func isObject(_ value: String) -> String {
    switch dialect {
    case .sqlite: "i.type = 'object'"
    case .postgres: "jsonb_typeof(\(value)) = 'object'"
    }
  }

  /// The join that yields each element of `document`'s `items` list as `i.value` (none when it is
  /// not a list).
  func items(_ document: String) -> String {
    switch dialect {
    case .sqlite:
      ", json_each(CASE json_type(\(document), '$.items') WHEN 'array' THEN json_extract(\(document), '$.items') "
        + "ELSE '[]' END) AS i"
    case .postgres:
      "CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(\(document) -> 'items') WHEN 'array' "
        + "THEN \(document) -> 'items' ELSE '[]'::jsonb END) AS i(value)"
    }
  }

  /// The item's name behind its time, zero-padded to 15 digits: the `max` of it is the latest name.
  func stamped(_ value: String, time: String) -> String {
    switch dialect {
    case .sqlite: "printf('%015d', \(time)) || coalesce(\(text(value, "item_name")), '')"
    case .postgres: "lpad((\(time))::text, 15, '0') || coalesce(\(text(value, "item_name")), '')"
    }
  }
}
