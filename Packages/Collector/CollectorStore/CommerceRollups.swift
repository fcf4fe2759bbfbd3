/// The commerce facts a store keeps next to its events, one row per fact, so the revenue and
/// top-items reports read typed columns instead of parsing every purchase's JSON:
/// - `rollup_orders`: one row per purchase or refund event (``CommerceVocabulary``: GA4's, Segment's
///   and Mixpanel's names and keys): its time, device, dimensions, whether it is a purchase, its
///   transaction key `k` (a purchase's transaction id, else its event id), `currency` and `value`.
/// - `rollup_items`: one row per item object of a purchase with an id or a name and a quantity of
///   at least 1: the order's key and currency, the item's id (`item`, else its name), `name`,
///   `category`, `brand`, `price` and `quantity`.
///
/// Both also carry `single`, which spares reports the probe for an earlier order of the same
/// transaction where it is 1 (``SQLDialect/singleOrderMarks``: kept by every write,
/// ``markSingles(orders:items:events:where:)``, or by the device-set build,
/// ``markSingles(orders:items:placeholder:)``).
///
/// Both are exact (nothing is aggregated), so they answer any range, not only whole hours. They are
/// kept like the activity rollups (``RollupSQL``): filled in the transaction that writes the events,
/// repaired in the one that erases or prunes them; each row has the `hour` and `device_id` those
/// statements select by. The relations ``orders(from:where:)`` and ``items(from:where:)`` are the one
/// definition of how a fact is read from an event's JSON: stores fill the tables from them, and
/// reports read them straight from the events when told not to use rollups (the two must agree).
public struct CommerceSQL: Sendable {
  /// The store's dialect.
  public let dialect: any SQLDialect

  /// The SQL of `dialect`.
  public init(dialect: any SQLDialect) { self.dialect = dialect }

  /// The columns of ``orders(from:where:)`` and the orders table, in order.
  public static let orderColumns =
    "app, hour, t, device_id, platform, app_version, os_version, event_id, purchase, k, currency, value"
  /// The columns of ``items(from:where:)`` and the items table, in order.
  public static let itemColumns =
    "app, hour, t, device_id, platform, app_version, os_version, event_id, position, k, currency, item, name, "
    + "category, brand, price, quantity"

  /// `CREATE TABLE` and `CREATE INDEX` statements for `orders` and `items`.
  public func create(orders: String, items: String) -> [String] {
    let (text, number, integer) = dialect.columnTypes
    let place = """
      app \(text) NOT NULL, hour BIGINT NOT NULL, t BIGINT NOT NULL, device_id \(text) NOT NULL,
        platform \(text) NOT NULL, app_version \(text) NOT NULL, os_version \(text) NOT NULL, event_id \(text) NOT NULL
      """
    return [
      """
      CREATE TABLE \(orders) (\(place), purchase \(integer) NOT NULL, k \(text) NOT NULL, currency \(text) NOT NULL,
        value \(number) NOT NULL, PRIMARY KEY (app, event_id))
      """,
      "CREATE INDEX rollup_orders_app_t ON \(orders) (app, t)",
      // Reports keep an order only when no order of its transaction in the range has a smaller id:
      // one index probe per order or item.
      "CREATE INDEX rollup_orders_app_k ON \(orders) (app, k, event_id)",
      "CREATE INDEX rollup_orders_app_device ON \(orders) (app, device_id)",
      """
      CREATE TABLE \(items) (\(place), position \(integer) NOT NULL, k \(text) NOT NULL, currency \(text) NOT NULL,
        item \(text) NOT NULL, name \(text), category \(text), brand \(text), price \(number), quantity \(number) NOT NULL,
        PRIMARY KEY (app, event_id, position))
      """,
      "CREATE INDEX rollup_items_app_t ON \(items) (app, t)",
      "CREATE INDEX rollup_items_app_device ON \(items) (app, device_id)",
    ]
  }

  /// `INSERT` statements adding the facts of the events of `source` matching `condition`.
  public func add(orders: String, items: String, from source: String, where condition: String) -> [String] {
    [
      "INSERT INTO \(orders) (\(Self.orderColumns)) SELECT \(Self.orderColumns) FROM (\(self.orders(from: source, where: condition))) o",
      "INSERT INTO \(items) (\(Self.itemColumns)) SELECT \(Self.itemColumns) FROM (\(self.items(from: source, where: condition))) i",
    ]
  }

  /// Statements keeping `single` (``SingleOrderMarks/byEveryWrite``) once the facts of the events of
  /// `events` matching `condition` were added (of every event when `nil`): 1 on each of those orders
  /// whose transaction key no other order of the app has; 0 on any order, earlier or new, whose key
  /// now has another; each item as its order. Exact with one writer only: writers running at once
  /// could each miss the other's order. Erasure and pruning leave it as it is (a 0 whose key lost
  /// its other orders costs a probe, never a wrong answer), and facts added again start at 0.
  public func markSingles(orders: String, items: String, events: String, where condition: String?) -> [String] {
    let others = Self.others(orders)
    let ofOrder = "coalesce((SELECT o.single FROM \(orders) o WHERE o.app = f.app AND o.event_id = f.event_id), 0)"
    guard let condition else {
      return [
        "UPDATE \(orders) AS f SET single = CASE WHEN \(others) THEN 0 ELSE 1 END",
        "UPDATE \(items) AS f SET single = \(ofOrder)",
      ]
    }
    let v = CommerceVocabulary.self
    let names = (v.purchases + v.refunds).map { "'\($0)'" }.joined(separator: ", ")
    let added = "SELECT app, event_id FROM \(events) WHERE (\(condition)) AND name IN (\(names))"
    let keys = "SELECT n.app, n.k FROM \(orders) n WHERE (n.app, n.event_id) IN (\(added))"
    return [
      "UPDATE \(orders) AS f SET single = 1 WHERE (app, event_id) IN (\(added)) AND NOT \(others)",
      "UPDATE \(orders) AS f SET single = 0 WHERE single = 1 AND (app, k) IN (\(keys)) AND \(others)",
      "UPDATE \(items) AS f SET single = \(ofOrder) "
        + "WHERE (app, event_id) IN (SELECT o.app, o.event_id FROM \(orders) o WHERE (o.app, o.k) IN (\(keys)))",
    ]
  }

  /// Statements marking `single` on the orders of app `1` with times in `[2, 3)` (ms) whose key no
  /// other order of the app has, and on their items (``SingleOrderMarks/byBuild``), `placeholder`
  /// writing the numbered placeholders. Exact only while no write adds an order: run by the
  /// device-set build, which writes wait for, beside a store that unmarks every key a write adds an
  /// order under.
  public func markSingles(orders: String, items: String, placeholder: (Int) -> String) -> [String] {
    let range = "f.app = \(placeholder(1)) AND f.t >= \(placeholder(2)) AND f.t < \(placeholder(3)) AND f.single = 0"
    return [
      "UPDATE \(orders) AS f SET single = 1 WHERE \(range) AND NOT \(Self.others(orders))",
      "UPDATE \(items) AS f SET single = 1 WHERE \(range) AND EXISTS "
        + "(SELECT 1 FROM \(orders) o WHERE o.app = f.app AND o.event_id = f.event_id AND o.single = 1)",
    ]
  }

  /// Whether another order of `orders` has the key of the fact `f`: what `single` says is not so.
  private static func others(_ orders: String) -> String {
    "EXISTS (SELECT 1 FROM \(orders) o WHERE o.app = f.app AND o.k = f.k AND o.event_id <> f.event_id)"
  }

  /// The order facts of the events of `source` (the events table, or a relation with its columns)
  /// matching `condition`: the columns ``orderColumns``.
  public func orders(from source: String, where condition: String) -> String {
    let v = CommerceVocabulary.self
    let names = (v.purchases + v.refunds).map { "'\($0)'" }.joined(separator: ", ")
    return "SELECT \(Self.orderColumns) FROM (SELECT app, hour, t, device_id, platform, app_version, os_version, "
      + "event_id, purchase, CASE WHEN purchase = 1 THEN coalesce(\(first(v.transactionID, text)), event_id) "
      + "ELSE event_id END AS k, coalesce(\(first(v.currency, text)), '') AS currency, "
      + "coalesce(\(first(v.value, money)), 0) AS value "
      + "FROM (\(events(from: source, where: condition, names: names, fields: v.value))) e) o"
  }

  /// The item facts of the purchases of `source` matching `condition`: the columns ``itemColumns``.
  public func items(from source: String, where condition: String) -> String {
    let v = CommerceVocabulary.self
    let fields = v.itemID + v.itemName + v.category + v.subcategories + v.brand + v.price + v.quantity
    let names = v.purchases.map { "'\($0)'" }.joined(separator: ", ")
    let purchases = events(from: source, where: condition, names: names, fields: [])
    let select =
      "SELECT e.app, e.hour, e.t, e.device_id, e.platform, e.app_version, e.os_version, e.event_id, "
      + "coalesce(\(first(v.transactionID, text)), e.event_id) AS k, "
      + "coalesce(\(first(v.currency, text)), '') AS currency, "
      + fields.map { "\(raw("i.value", $0)) AS \(Self.alias($0))" }.joined(separator: ", ")
    let elements = dialect.listElements(select: select, source: purchases)
    return "SELECT \(Self.itemColumns) FROM (SELECT app, hour, t, device_id, platform, app_version, os_version, "
      + "event_id, position, k, currency, coalesce(\(first(v.itemID, text)), \(first(v.itemName, text))) AS item, "
      + "\(first(v.itemName, text)) AS name, \(categoryPath) AS category, "
      + "\(first(v.brand, text)) AS brand, \(first(v.price, money)) AS price, "
      + "coalesce(\(first(v.quantity, money)), 1) AS quantity FROM (\(elements)) x) i "
      + "WHERE item IS NOT NULL AND quantity >= 1"
  }

  /// The events named `names` of `source` matching `condition`, with their time `t` (ms), `hour`,
  /// `purchase` (1 or 0), the list of items as `f_items` (the first of ``CommerceVocabulary/items``
  /// that is a list), and the raw JSON of the transaction id, the currency and `fields`, each under
  /// its ``alias(_:)``.
  private func events(from source: String, where condition: String, names: String, fields: [String]) -> String {
    let v = CommerceVocabulary.self
    let t = dialect.milliseconds("occurred_at")
    let lists = v.items.map { list("parameters", $0) }
    let extracted =
      (v.transactionID + v.currency + fields).map { "\(raw("parameters", $0)) AS \(Self.alias($0))" }
      + ["coalesce(\(lists.joined(separator: ", "))) AS f_items"]
    let purchase = v.purchases.map { "'\($0)'" }.joined(separator: ", ")
    return "SELECT app, \(t) / \(RollupTables.hour) * \(RollupTables.hour) AS hour, \(t) AS t, device_id, platform, "
      + "app_version, os_version, event_id, CASE WHEN name IN (\(purchase)) THEN 1 ELSE 0 END AS purchase, "
      + "\(extracted.joined(separator: ", ")) FROM \(source) WHERE (\(condition)) AND name IN (\(names))\(fence)"
  }

  /// The column a parameter is extracted as: `f_` and its key in lower case, spaces as `_`, and `_tc`
  /// for a key with a capital (`Order ID` → `f_order_id_tc`; SQLite's names ignore case).
  static func alias(_ key: String) -> String {
    let lower = key.lowercased()
    return "f_" + String(lower.map { $0 == " " ? "_" : $0 }) + (lower == key ? "" : "_tc")
  }

  /// The item's category path: its category, then each deeper level it gives, joined by
  /// ``CommerceVocabulary/categorySeparator`` (`NULL` without a category).
  private var categoryPath: String {
    let v = CommerceVocabulary.self
    let separator = "'\(v.categorySeparator)'"
    return ([first(v.category, text)] + v.subcategories.map { "coalesce(\(separator) || \(text($0)), '')" })
      .joined(separator: " || ")
  }

  /// The condition that `column` (a category path) has `placeholder` as one of its levels.
  public static func hasCategoryLevel(_ column: String, _ placeholder: String) -> String {
    let separator = "'\(CommerceVocabulary.categorySeparator)'"
    let padded = "\(separator) || \(column) || \(separator)"
    return "replace(\(padded), \(separator) || \(placeholder) || \(separator), '') <> \(padded)"
  }

  /// The first of `keys` whose extracted value `read` accepts (their columns must be extracted).
  private func first(_ keys: [String], _ read: (String) -> String) -> String {
    keys.count == 1 ? read(keys[0]) : "coalesce(\(keys.map(read).joined(separator: ", ")))"
  }

  /// Keeps the subquery it ends from being merged into the query around it, so its extracted columns
  /// are computed once per row, not again in every expression that names them.
  private var fence: String { dialect.fence }

  /// `document`'s `key` as extracted once.
  private func raw(_ document: String, _ key: String) -> String { dialect.jsonValue(document, key) }

  /// `document`'s `key` when it is a list, else `NULL`.
  private func list(_ document: String, _ key: String) -> String { dialect.jsonList(document, key) }

  /// The extracted field of `key` as text when it is a string, else `NULL`.
  private func text(_ key: String) -> String { dialect.jsonText(Self.alias(key)) }

  /// The extracted field of `key` as a double when it is a number under 10^15 in size, else `NULL`.
  private func money(_ key: String) -> String { dialect.jsonNumber(Self.alias(key)) }
}
