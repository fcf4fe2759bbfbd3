public import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import NIOCore

/// The reports of the ClickHouse engine, in ClickHouse's SQL (the subset 18.16 and current releases
/// share; ``ClickHouseSQL``), with the same answers as the SQL engines on the same events: the same
/// hand-computed tests run against each. What turns rows into results (shares, every bucket of a
/// series, cohorts, the funnel walk, medians, revenue per day) is the result types' own code (`Retention(_:filter:period:byAppVersion:)`, `Funnel.reached`, ...), shared by every engine.
///
/// Events, orders and items are read without `FINAL`: a write merges away any duplicate of its
/// events before it answers (`removeDuplicates(of:)`). Counters and keys, whose rows are replaced
/// by design (a larger total, a revoked key), are read with `FINAL`. Commerce reads the `orders` and
/// `items` facts.
public struct ClickHouseReports: ReportEngine {
  let client: ClickHouseClient
  let schema: ClickHouseSchema
  /// Whether reports read the rollups where they can (``ReportFilter/rollupsAnswer``).
  public let usesRollups: Bool
  /// What one funnel asks of the server at most (``FunnelLimits``); tests make them small.
  package var funnelLimits = FunnelLimits()
  /// The most hashes seen more than once (transaction keys, sessions) that commerce reports and
  /// sessions name in a query (about 20 bytes each, inside the server's 256 KB of query text); past
  /// it they group every order by key, every session's rows by session. Tests make it small to take
  /// that path.
  package var repeatedKeysListed = 2_000
  /// The most periods (days or weeks) a retention counts by 64-bit masks of each unit's periods;
  /// longer ranges by arrays (`ClickHouseRetentionMasks.swift`). Tests make it 0 to compare the two.
  package var maskedPeriods: Int64 = 64

  /// The reports of `store`; `rollups: false` reads every event even where the rollups would
  /// answer (the same results, slower; for comparisons and benchmarks).
  public init(store: ClickHouseEventStore, rollups: Bool = true) {
    client = store.client
    schema = store.schema
    usesRollups = rollups
  }

  /// The `activity` rollup when it answers `filter`.
  func activity(_ filter: ReportFilter) -> String? {
    usesRollups && filter.rollupsAnswer ? schema.table("activity") : nil
  }

  /// The conditions of `filter` on a rollup: `hour` in the range (of whole hours) and dimensions.
  static func rollupConditions(_ filter: ReportFilter) -> String {
    conditions(filter, time: "hour", dated: false)
  }

  /// The rows of `sql`, run with `settings` (ClickHouse's, per query). On a cluster, a subquery over
  /// a `Distributed` table inside `IN` or `JOIN` reads each shard's local table
  /// (`distributed_product_mode = local`): rows are sharded by device, so a device's other events
  /// are on its own shard; subqueries that must see every shard say `GLOBAL IN`.
  func rows(_ sql: String, settings: [String: String] = [:]) async throws -> [SQLRow] {
    try await client.rows(sql, settings: settings.merging(["distributed_product_mode": "local"]) { $1 })
  }

  /// The answer of `sql` (naming its `FORMAT`) handed to `consume` as it arrives, from the state
  /// `start` makes meanwhile (``ClickHouseClient/stream(_:settings:from:_:)``), with
  /// ``rows(_:settings:)``'s settings.
  func stream<State: Sendable>(
    _ sql: String, settings: [String: String] = [:], from start: @escaping @Sendable () async throws -> State,
    _ consume: @escaping @Sendable (inout State, ByteBuffer) throws -> Void
  ) async throws -> State {
    try await client.stream(
      sql, settings: settings.merging(["distributed_product_mode": "local"]) { $1 }, from: start, consume)
  }

  /// The events of `filter` in ClickHouse's SQL: app, time range (ms in `time`) and dimensions.
  /// `dated`: the table has the `day` of `time` (events, orders, items), so the range also bounds
  /// `day`, the sort key's second column, and ClickHouse reads only the range's days and months.
  static func conditions(_ filter: ReportFilter, time: String = "occurred_at", dated: Bool = true) -> String {
    var parts = [
      "app = \(ClickHouseSQL.literal(filter.storedApp))", "\(time) >= \(ClickHouseSQL.literal(filter.from))",
      "\(time) < \(ClickHouseSQL.literal(filter.to))",
    ]
    if dated {
      parts.append(
        "day >= \(ClickHouseSchema.days([filter.from])) AND day <= \(ClickHouseSchema.days([filter.to - 1]))")
    }
    return (parts + dimensions(filter)).joined(separator: " AND ")
  }

  /// The conditions of `filter`'s dimensions (platform, versions, app name), without its app or range.
  static func dimensions(_ filter: ReportFilter) -> [String] {
    var parts: [String] = []
    if let platform = filter.platform { parts.append("platform = \(ClickHouseSQL.literal(platform))") }
    if let version = filter.appVersion { parts.append("app_version = \(ClickHouseSQL.literal(version))") }
    if let version = filter.osVersion { parts.append("os_version = \(ClickHouseSQL.literal(version))") }
    if let name = filter.appName { parts.append("app_name = \(ClickHouseSQL.literal(name))") }
    return parts
  }

  /// Events at or after `time` (ms), bounded on `day` too.
  static func since(_ time: Int64) -> String {
    "occurred_at >= \(ClickHouseSQL.literal(time)) AND day >= \(ClickHouseSchema.days([time]))"
  }

  /// The events table: every event once, without `FINAL` (writes leave no duplicate behind,
  /// `removeDuplicates(of:)`).
  var events: String { schema.events }

  public func apps() async throws -> [String] {
    try await rows("SELECT DISTINCT app FROM \(schema.events) ORDER BY app LIMIT 1000").compactMap { $0["app"].text }
  }

  public func population(_ filter: ReportFilter) async throws -> (devices: Int64, people: Int64) {
    try await population(filter, closed: closedDays(filter))
  }

  /// The overview's figures of one range, the closed days' check (``closedDays(_:)``: the range's
  /// rollup read by day) taken once for its devices and its totals.
  public func overviewFigures(_ filter: ReportFilter) async throws -> Overview.Figures {
    let closed = try await closedDays(filter)
    return try await Overview.Figures(
      filter, population: { try await population($0, closed: closed) },
      aggregate: { try await aggregate($0, closed: closed) })
  }

  /// The devices and people of `filter`, from its clean days `closed` where there are some.
  private func population(_ filter: ReportFilter, closed: CleanDays?) async throws -> (devices: Int64, people: Int64) {
    // Devices and people from one distinct-device query, each device with its person, both by
    // their hashes.
    let activity = activity(filter)
    let devices =
      closedDevices(filter, closed)
      ?? "SELECT DISTINCT \(UnitKey.hashes.deviceColumn(rollup: activity != nil)) FROM \(activity ?? events) "
      + "WHERE \(activity == nil ? Self.conditions(filter) : Self.rollupConditions(filter))"
    let row = try await rows(
      "SELECT toInt64(count()) AS devices, toInt64(uniqExact(unit)) AS people "
        + "FROM (\(units(of: devices, app: filter.storedApp, people: true, key: .hashes)))"
    ).first
    return (row?["devices"].int ?? 0, row?["people"].int ?? 0)
  }

  /// A device id's 64-bit hash, the `device` column of the rollups (``ClickHouseSchema/rollups``):
  /// every report counts devices and units by it, whichever table it reads.
  static let deviceHash = "cityHash64(device_id)"

  /// The sum of a column of client-sent counts, saturating at `Int64.max` instead of wrapping.
  static func saturatingSum(_ column: String) -> String {
    "if(sum(toFloat64(\(column))) >= 9.2e18, toInt64(9223372036854775807), toInt64(sum(\(column))))"
  }
}
