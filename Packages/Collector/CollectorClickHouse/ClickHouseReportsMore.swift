public import CollectorReports
public import CollectorStore
import CollectorWire

/// Sessions, the rows behind a report, and commerce, on ClickHouse.
extension ClickHouseReports {
  /// Sessions, counted and their median taken on the server (as ``Sessions/init(_:)`` does
  /// from one row per session): the middle duration, or the mean of the two middle ones, in whole ms.
  public func sessions(_ filter: ReportFilter) async throws -> Sessions {
    if let found = try await closedSessions(filter) { return found }
    let (perSession, expected) = try await sessionRows(filter)
    if let expected, let found = try await sessions(perSession, ranked: expected) { return found }
    let half = "intDiv(c, 2)"
    return Self.sessions(
      try await rows(
        "SELECT c, e, if(c = 0, toInt64(0), if(c % 2 = 1, toInt64(s[\(half) + 1]), "
          + "toInt64(intDiv(s[\(half)] + s[\(half) + 1], 2)))) AS m FROM (SELECT toInt64(count()) AS c, "
          + "toInt64(sum(n)) AS e, arraySort(groupArray(d)) AS s FROM (\(perSession)))"
      ).first)
  }

  /// The sessions of `perSession` when they are `count`, the median picked by its ranks
  /// (`quantilesExact` at the two middle ones, which takes the value at `level × count` rounded
  /// down: a partial sort instead of sorting every duration, 0.3 s of 1.4 at 100M events); `nil`
  /// when they are not `count` (two sessions' hashes collided in the count), for the full sort.
  private func sessions(_ perSession: String, ranked count: Int64) async throws -> Sessions? {
    guard count > 0 else { return nil }
    let levels = [(count - 1) / 2, count / 2].map { "\((Double($0) + 0.5) / Double(count))" }
    let found = try await rows(
      "SELECT c, e, toInt64(intDiv(m[1] + m[2], 2)) AS m FROM (SELECT toInt64(count()) AS c, toInt64(sum(n)) AS e, "
        + "quantilesExact(\(levels.joined(separator: ", ")))(d) AS m FROM (\(perSession)))"
    ).first
    return found?["c"].int == count ? Self.sessions(found) : nil
  }

  /// The report from its row: `c` sessions, `e` events, median `m`.
  static func sessions(_ found: SQLRow?) -> Sessions {
    let count = found?["c"].int ?? 0
    return Sessions(
      count: count, medianDuration: count == 0 ? 0 : found?["m"].int ?? 0,
      eventsPerSession: count == 0 ? 0 : Double(found?["e"].int ?? 0) / Double(count))
  }

  /// One row per session of `filter`, its duration (`d`) and events (`n`), and how many sessions
  /// they are when that is known before (the rows less the repeats found). A session is grouped by
  /// the device's hash and the session key's (two integers, not strings: 1.5× faster at 10M
  /// events); two sessions of one device with the same key hash would be one.
  ///
  /// On the rollup a session has a row per hour and dimensions it has events in (and per part not
  /// yet merged), but most have one: a session whose hash is seen once in the range passes as its
  /// row is, and only those seen twice or more (read first, up to
  /// ``ClickHouseReports/repeatedKeysListed``; past it every row is grouped) are grouped. Grouping
  /// every row was 1.2 s of the report's 2.4 at 100M events (`Docs/Benchmarks.md`).
  private func sessionRows(_ filter: ReportFilter) async throws -> (sql: String, count: Int64?) {
    guard let activity = activity(filter) else {
      let sql =
        "SELECT max(occurred_at) - min(occurred_at) AS d, count() AS n FROM \(events) "
        + "WHERE \(Self.conditions(filter)) AND isNotNull(session_id) GROUP BY \(Self.deviceHash), session_id"
      return (sql, nil)
    }
    let rows = "FROM \(activity) WHERE \(Self.rollupConditions(filter)) AND session_key != ''"
    let session = "cityHash64(device, cityHash64(session_key))"
    let grouped =
      "SELECT maxMerge(last_ms) - minMerge(first_ms) AS d, sumMerge(events) AS n \(rows)"
    let bySession = " GROUP BY device, cityHash64(session_key)"
    async let total = self.rows("SELECT toInt64(count()) AS n \(rows)")
    guard let repeated = try await repeatedHashes(of: session, rows) else { return (grouped + bySession, nil) }
    let count = (try await total.first?["n"].int ?? 0) - repeated.values.reduce(0) { $0 + $1 - 1 }
    let single =
      "SELECT finalizeAggregation(last_ms) - finalizeAggregation(first_ms) AS d, finalizeAggregation(events) AS n \(rows)"
    guard !repeated.isEmpty else { return (single, count) }
    let list = ClickHouseSQL.list(repeated.keys)
    return ("\(single) AND \(session) NOT IN \(list) UNION ALL \(grouped) AND \(session) IN \(list)\(bySession)", count)
  }

  public func eventRows(_ filter: ReportFilter, search: EventSearch, limit: Int, after: String?) async throws
    -> EventRows
  {
    try search.check()
    var conditions = Self.conditions(filter) + Self.conditions(search)
    let cursor = try EventRows.cursor(after)
    if let (time, id) = cursor {
      let bound = ClickHouseSQL.literal(time)
      conditions +=
        " AND (occurred_at < \(bound) OR (occurred_at = \(bound) AND event_id < \(ClickHouseSQL.literal(id))))"
    }
    let page = max(1, min(limit, 1_000))
    // The newest day before the page's upper bound first: when it holds a whole page, that page is
    // the answer without sorting the whole range.
    // (A cursor from outside the range, any Int64, is not used in arithmetic.)
    let upper = cursor.flatMap { (filter.from..<filter.to).contains($0.0) ? $0.0 + 1 : nil } ?? filter.to
    if upper - filter.from > 86_400_000 {
      let recent = try await self.page(
        conditions + " AND \(Self.since(upper - 86_400_000))", page)
      if recent.count > page { return EventRows(recent, page: page) }
    }
    return EventRows(try await self.page(conditions, page), page: page)
  }

  public func eventCount(_ filter: ReportFilter, search: EventSearch) async throws -> Int64 {
    try search.check()
    let conditions = Self.conditions(filter) + Self.conditions(search)
    return try await rows("SELECT toInt64(count()) AS n FROM \(events) WHERE \(conditions)").first?["n"].int ?? 0
  }

  /// `search`'s conditions, each after ` AND ` (a parameter by its key's place in `param_keys`).
  static func conditions(_ search: EventSearch) -> String {
    var text = ""
    for (column, value) in search.columnMatches { text += " AND \(column) = \(ClickHouseSQL.literal(value))" }
    for match in search.parameters {
      let key = ClickHouseSQL.literal(match.key)
      text += " AND has(param_keys, \(key)) AND param_values[indexOf(param_keys, \(key))] = "
      text += ClickHouseSQL.literal(match.value)
    }
    return text
  }

  /// The newest `page + 1` events of `conditions`: their keys first, sorting three small columns,
  /// then only those rows' other columns (the parameters are most of a row's bytes), found through
  /// the sort key by name and id (a set of literals, so the server reads their granules alone: at
  /// 100M events 0.25 s where a subquery's set took 1.2 s), each row then matched by time and id.
  private func page(_ conditions: String, _ page: Int) async throws -> [SQLRow] {
    let keys = try await rows(
      "SELECT name, occurred_at, event_id FROM \(events) WHERE \(conditions) "
        + "ORDER BY occurred_at DESC, event_id DESC LIMIT \(page + 1)")
    if keys.isEmpty { return [] }
    func tuples(_ first: (SQLRow) -> String) -> String {
      keys.map { "(\(first($0)), \(ClickHouseSQL.literal($0["event_id"].text ?? "")))" }.joined(separator: ", ")
    }
    let named = tuples { ClickHouseSQL.literal($0["name"].text ?? "") }
    let timed = tuples { ClickHouseSQL.literal($0["occurred_at"].int ?? 0) }
    return try await rows(
      "SELECT \(EventRows.columns(milliseconds: { $0 }, parameters: "parameters")) "
        + "FROM \(events) PREWHERE (name, event_id) IN (\(named)) "
        + "WHERE \(conditions) AND (occurred_at, event_id) IN (\(timed)) "
        + "ORDER BY occurred_at DESC, event_id DESC LIMIT \(page + 1)")
  }

  // MARK: Commerce

  public func revenueDays(_ filter: ReportFilter) async throws -> [SQLRow] {
    // The local day (the filter's zone) is named `day` outside the query that reads the table,
    // whose `day` column the conditions bound.
    let day = filter.zone.bucketSQL("t", .day, from: filter.from, to: filter.to) { "intDiv(\($0), \($1))" }
    return try await rows(
      "SELECT ms AS day, currency, orders, gross, refund_count, refunds FROM ("
        + "SELECT \(day) AS ms, currency, toInt64(sum(purchase)) AS orders, "
        + "sum(purchase * value) AS gross, toInt64(sum(1 - purchase)) AS refund_count, "
        + "sum((1 - purchase) * value) AS refunds FROM \(schema.orders) "
        + "WHERE \(Self.conditions(filter, time: "t")) AND \(try await firstOrder(filter)) "
        + "GROUP BY ms, currency) ORDER BY day, currency")
  }

  /// The condition keeping the rows of the first order event (by id) of each transaction key among
  /// the orders of `filter`, over every shard (one transaction may be sent from two devices).
  ///
  /// Most keys are sent once, and a key whose 64-bit hash is seen once among those orders is sent
  /// once: its order is its first. So the keys whose hash is seen twice or more (resent, or sharing
  /// a hash) are read first, and only their orders are grouped by key; the others pass as they are.
  /// Grouping every order by its key was most of revenue and top items at 100M events (about 1.5 s
  /// of 2; counting the hashes takes 0.5–0.7, `Docs/Benchmarks.md`). Past
  /// ``ClickHouseReports/repeatedKeysListed`` such hashes (a list too long for a query's text),
  /// every order is grouped by key, as before. The firsts are kept as their ids' 64-bit hashes: a
  /// later order whose id had a first one's hash would count too, a chance of 4 in 10^9 at 300,000
  /// orders.
  private func firstOrder(_ filter: ReportFilter) async throws -> String {
    let orders = "FROM \(schema.orders) WHERE \(Self.conditions(filter, time: "t"))"
    return try await repeatedKeys(orders) ?? Self.groupedFirsts(orders)
  }

  /// The condition keeping, of the orders `orders` (`FROM … WHERE …`), the first (by id) of each
  /// key, every order grouped by key over every shard.
  private static func groupedFirsts(_ orders: String) -> String {
    "cityHash64(event_id) GLOBAL IN (SELECT cityHash64(min(event_id)) \(orders) GROUP BY k)"
  }

  /// The condition keeping, of the orders `orders` (`FROM … WHERE …`), those whose key's hash is
  /// seen once and the first (by id) of those seen twice or more; `nil` past
  /// ``ClickHouseReports/repeatedKeysListed`` such hashes. Both lists are read first and named in
  /// the condition, so it sends no subquery to the shards of a cluster.
  private func repeatedKeys(_ orders: String) async throws -> String? {
    guard let repeated = try await repeatedHashes(of: "cityHash64(k)", orders) else { return nil }
    guard !repeated.isEmpty else { return "1" }
    let list = ClickHouseSQL.list(repeated.keys)
    // Each repeated hash has two orders or more, so a first: the list is never empty.
    let firsts = try await hashes(
      "SELECT toString(cityHash64(min(event_id))) AS h \(orders) AND cityHash64(k) IN \(list) GROUP BY k")
    return "(cityHash64(k) NOT IN \(list) OR cityHash64(event_id) IN \(ClickHouseSQL.list(firsts)))"
  }

  /// The values of the 64-bit hash `hash` seen in two rows or more of `rows` (`FROM … WHERE …`),
  /// each with its rows, or `nil` past ``ClickHouseReports/repeatedKeysListed`` of them.
  private func repeatedHashes(of hash: String, _ rows: String) async throws -> [UInt64: Int64]? {
    let found = try await self.rows(
      "SELECT toString(h) AS h, n FROM (SELECT \(hash) AS h, toInt64(count()) AS n \(rows) GROUP BY h HAVING n > 1) "
        + "LIMIT \(repeatedKeysListed + 1)")
    guard found.count <= repeatedKeysListed else { return nil }
    return Dictionary(
      found.compactMap { row in row["h"].text.flatMap(UInt64.init).map { ($0, row["n"].int ?? 2) } },
      uniquingKeysWith: +)
  }

  /// The 64-bit hashes `sql` reads (as text, in column `h`).
  private func hashes(_ sql: String) async throws -> [UInt64] {
    try await rows(sql).compactMap { $0["h"].text.flatMap(UInt64.init) }
  }

  /// The condition keeping the items of the first purchase of each transaction key among `orders`
  /// (`FROM … WHERE …`; as ``firstOrder(_:)`` keeps orders). Every item belongs to an order, but
  /// items do not say whether it was a purchase or a refund: those of refunds are left out by their
  /// ids' hashes (a set of the refunds, a quarter of the orders at 100M, where the purchases' firsts
  /// would be the rest; a purchase whose id had a refund's hash would be left out, as unlikely as
  /// the collision above).
  func firstPurchaseItems(orders: String) async throws -> String {
    let purchases = orders + " AND purchase = 1"
    guard let first = try await repeatedKeys(purchases) else { return Self.groupedFirsts(purchases) }
    return "cityHash64(event_id) GLOBAL NOT IN (SELECT cityHash64(event_id) \(orders) AND purchase = 0) AND \(first)"
  }

  public func topItemRows(_ filter: ReportFilter, category: String?, brand: String?, limit: Int) async throws
    -> [SQLRow]
  {
    if category == nil, brand == nil, let closed = try await closedTopItems(filter, limit: limit) { return closed }
    let orders = "FROM \(schema.orders) WHERE \(Self.conditions(filter, time: "t"))"
    var conditions = [Self.conditions(filter, time: "t"), try await firstPurchaseItems(orders: orders)]
    // A category matches any level of an item's category path (`Kitchen` in `Home > Kitchen`); an
    // item without one matches none, not even `""` (as on the SQL engines, where its path is `NULL`).
    if let category {
      let separator = ClickHouseSQL.literal(CommerceVocabulary.categorySeparator)
      conditions.append(
        "isNotNull(category) AND position(concat(\(separator), assumeNotNull(category), \(separator)), "
          + "concat(\(separator), \(ClickHouseSQL.literal(category)), \(separator))) > 0")
    }
    if let brand { conditions.append("brand = \(ClickHouseSQL.literal(brand))") }
    return try await rows(
      "SELECT item, latest AS name, currency, units, revenue, orders, buyers FROM ("
        + "SELECT item, substring(\(ClickHouseSchema.latestName), 17, 1000000) AS latest, "
        + "currency, sum(quantity) AS units, sum(quantity * ifNull(price, 0)) AS revenue, "
        + "toInt64(uniqExact(cityHash64(k))) AS orders, toInt64(uniqExact(cityHash64(device_id))) AS buyers "
        + "FROM \(schema.items) "
        + "WHERE \(conditions.joined(separator: " AND ")) GROUP BY item, currency) "
        + "ORDER BY revenue DESC, item, currency LIMIT \(max(1, limit))")
  }
}
