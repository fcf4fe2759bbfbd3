/// The rollup tables a store keeps next to its events, so reports read aggregates or typed facts
/// instead of every event.
///
/// Both are kept exact, not approximate: each row holds one device's activity in one hour, so any
/// range of whole hours can still count distinct devices and sessions.
/// - `rollup_sessions`: per app, hour, device, session and (platform, app version, OS version): the
///   number of events and the first and last event time (ms). Overview, time series, active devices,
///   retention, breakdowns and sessions read it.
/// - `rollup_names`: per app, hour, event name, device and the same three dimensions: the number of
///   events. Top events and one event's time series read it.
/// - `rollup_orders` and `rollup_items`: the commerce facts of purchases and refunds, one row each
///   (``CommerceSQL``). Revenue and top items read them, over any range.
///
/// Stores keep them current in the transaction that writes events (only rows actually inserted
/// count, so a resent event changes nothing), and repair them in the transaction that erases or
/// prunes events. ``RollupSQL`` writes the statements both stores run; a store supplies its dialect's
/// pieces.
public struct RollupTables: Sendable, Hashable {
  /// The sessions rollup's qualified name.
  public var sessions: String
  /// The names rollup's qualified name.
  public var names: String
  /// The order facts' qualified name.
  public var orders: String
  /// The item facts' qualified name.
  public var items: String

  /// Rollups named `sessions`, `names`, `orders` and `items`.
  public init(sessions: String, names: String, orders: String, items: String) {
    self.sessions = sessions
    self.names = names
    self.orders = orders
    self.items = items
  }

  /// The rollups `rollup_sessions`, `rollup_names`, `rollup_orders` and `rollup_items`, each behind
  /// `prefix` (a schema and a dot, or nothing).
  public init(prefix: String) {
    self.init(
      sessions: prefix + "rollup_sessions", names: prefix + "rollup_names", orders: prefix + "rollup_orders",
      items: prefix + "rollup_items")
  }

  /// Every table, in the order statements touch them.
  public var all: [String] { [sessions, names, orders, items] }

  /// The rollups' granularity: one hour, in ms. Reports use them for ranges that start and end on
  /// whole hours (UTC).
  public static let hour: Int64 = 3_600_000
}

/// The SQL of the rollups, for one store's dialect: creation, filling from a set of events, and
/// deleting. The activity rollups (sessions, names) and the commerce facts (orders, items) were added
/// in separate migrations, so each has its own creation and filling; ``add(from:where:)`` and
/// ``delete(where:)`` keep all four.
public struct RollupSQL: Sendable {
  /// The tables.
  public let tables: RollupTables
  /// The store's dialect.
  public let dialect: any SQLDialect

  /// The SQL for `tables` in `dialect`.
  public init(tables: RollupTables, dialect: any SQLDialect) {
    self.tables = tables
    self.dialect = dialect
  }

  /// A time column of the events table as ms since 1970 (the same expression reports use).
  public func ms(_ column: String) -> String {
    dialect.milliseconds(column)
  }

  /// The hour (ms since 1970) holding a time column of the events table, as the rollups key it.
  public func hour(of column: String) -> String {
    "(\(ms(column)) / \(RollupTables.hour) * \(RollupTables.hour))"
  }

  /// `CREATE TABLE` and `CREATE INDEX` statements of the activity rollups.
  public var createActivity: [String] {
    let dimensions = "platform TEXT NOT NULL, app_version TEXT NOT NULL, os_version TEXT NOT NULL"
    return [
      """
      CREATE TABLE \(tables.sessions) (
        app TEXT NOT NULL, hour BIGINT NOT NULL, device_id TEXT NOT NULL, session_key TEXT NOT NULL, \(dimensions),
        events BIGINT NOT NULL, first_ms BIGINT NOT NULL, last_ms BIGINT NOT NULL,
        PRIMARY KEY (app, hour, device_id, session_key, platform, app_version, os_version)
      )
      """,
      "CREATE INDEX rollup_sessions_app_device ON \(tables.sessions) (app, device_id, hour)",
      """
      CREATE TABLE \(tables.names) (
        app TEXT NOT NULL, hour BIGINT NOT NULL, name TEXT NOT NULL, device_id TEXT NOT NULL, \(dimensions),
        events BIGINT NOT NULL,
        PRIMARY KEY (app, hour, name, device_id, platform, app_version, os_version)
      )
      """,
      "CREATE INDEX rollup_names_app_device ON \(tables.names) (app, device_id)",
    ]
  }

  /// `CREATE TABLE` and `CREATE INDEX` statements of the commerce facts.
  public var createCommerce: [String] {
    CommerceSQL(dialect: dialect).create(orders: tables.orders, items: tables.items)
  }

  /// Adds the events of `source` (the events table, or a relation with its columns) that match
  /// `condition` to every rollup, and keeps the facts' `single` where every write marks it
  /// (``SingleOrderMarks/byEveryWrite``; ``markSingles(from:where:)``).
  public func add(from source: String, where condition: String) -> [String] {
    addActivity(from: source, where: condition) + addCommerce(from: source, where: condition)
      + (dialect.singleOrderMarks == .byEveryWrite ? markSingles(from: source, where: condition) : [])
  }

  /// Keeps the facts' `single` after the facts of the events of `source` matching `condition` were
  /// added (every fact when `nil`): ``CommerceSQL/markSingles(orders:items:events:where:)``.
  public func markSingles(from source: String, where condition: String?) -> [String] {
    CommerceSQL(dialect: dialect).markSingles(
      orders: tables.orders, items: tables.items, events: source, where: condition)
  }

  /// Adds the facts of the purchases and refunds of `source` matching `condition`.
  public func addCommerce(from source: String, where condition: String) -> [String] {
    CommerceSQL(dialect: dialect).add(orders: tables.orders, items: tables.items, from: source, where: condition)
  }

  /// Adds the events of `source` that match `condition` to the activity rollups. Rows are written in
  /// key order, so concurrent writers lock them in the same order (no deadlock on PostgreSQL).
  public func addActivity(from source: String, where condition: String) -> [String] {
    let t = ms("occurred_at")
    let smaller = dialect.smallerOfTwo
    let larger = dialect.largerOfTwo
    let hourKey = hour(of: "occurred_at")
    return [
      """
      INSERT INTO \(tables.sessions) AS r (app, hour, device_id, session_key, platform, app_version, os_version, events,
        first_ms, last_ms)
      SELECT app, \(hourKey), device_id, coalesce(CAST(session_id AS TEXT), ''), platform, app_version, os_version,
        count(*), min(\(t)), max(\(t))
      FROM \(source) WHERE \(condition)
      GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT (app, hour, device_id, session_key, platform, app_version, os_version) DO UPDATE SET
        events = r.events + excluded.events, first_ms = \(smaller)(r.first_ms, excluded.first_ms),
        last_ms = \(larger)(r.last_ms, excluded.last_ms)
      """,
      """
      INSERT INTO \(tables.names) AS r (app, hour, name, device_id, platform, app_version, os_version, events)
      SELECT app, \(hourKey), name, device_id, platform, app_version, os_version, count(*)
      FROM \(source) WHERE \(condition)
      GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT (app, hour, name, device_id, platform, app_version, os_version) DO UPDATE SET
        events = r.events + excluded.events
      """,
    ]
  }

  /// Deletes the rollup rows matching `condition` (over `app`, `hour`, `device_id`) in every rollup.
  public func delete(where condition: String) -> [String] {
    tables.all.map { "DELETE FROM \($0) WHERE \(condition)" }
  }

  /// The hour holding `milliseconds`.
  public static func hour(of milliseconds: Int64) -> Int64 {
    milliseconds / RollupTables.hour * RollupTables.hour
  }
}

/// A store tools can load in bulk: run their own statements (never a client's), then rebuild the
/// rollups from what they loaded. Benchmarks generate their data this way.
public protocol BulkLoading: ReportQuerying {
  /// Runs `sql` on the store (statements written by the tool itself).
  func execute(_ sql: String) async throws
  /// Rebuilds the rollups from every stored event; returns the number of rollup rows.
  @discardableResult func rebuildRollups() async throws -> Int
}
