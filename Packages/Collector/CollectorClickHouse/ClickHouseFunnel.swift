public import CollectorReports
import CollectorStore
import CollectorWire

/// The funnel on ClickHouse: the same furthest step per person or device as the SQL engines' walk
/// (``Funnel/reached(_:steps:window:)``), computed by the server with `windowFunnel`.
///
/// Two limits of `windowFunnel` in 18.16 shape the query, and neither may change an answer:
/// - It breaks ties between events of one millisecond by step, the walk by tracking order (the
///   event id). So each event's time is made unique and ordered as the walk orders: `T = ms × K +
///   rank`, the rank counting the unit's earlier events of the same millisecond by id (K = 16).
///   Scaled so, a window can no longer be told exactly: `windowFunnel(W × K)` finds only chains the
///   walk finds and `windowFunnel(W × K + K − 1)` every chain it finds, so where both give one level
///   it is the walk's.
/// - It keeps chain starts as signed 32-bit numbers: a start at 2^31 or later is lost. So the range
///   is cut into blocks of `2^31 / K` ms and each unit's events are funnelled per block, times
///   counted from the block's start; a block also holds the first `W` ms of the next one (where its
///   chains can end), but starts only in its own. A unit's level is its best block's.
///
/// The units where the two windows disagree or that have more than K events in one millisecond,
/// and funnels whose window is over 1.5 days or that name a step twice (one event would match two
/// steps), are walked by the collector from their rows, as the SQL engines do.
extension ClickHouseReports {
  /// Events of one millisecond per unit that the scaled times keep apart.
  static let funnelScale: Int64 = 16
  /// Step events funnelled in one query, at most (about 1 GB of the server's memory).
  static let funnelPart: Int64 = 4_000_000

  public func funnel(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?) async throws
    -> Funnel
  {
    let filter = try Funnel.filter(filter, steps: steps, window: window, appVersion: appVersion)
    let matching = Self.matching(filter, steps: steps)
    let scale = Self.funnelScale
    let people = try await countsPeople(filter)
    let all = FunnelPart(matching: matching, units: "")
    guard Set(steps).count == steps.count, window <= (Int64(Int32.max) - scale) / scale else {
      let found = try await funnelEvents(filter, steps: steps, limit: nil)
      return Funnel(found, steps: steps, window: window, appVersion: appVersion, unit: filter.unit)
    }
    // A unit's events are held in memory while it is funnelled: units are taken in parts of about 4
    // million step events (by a hash of the unit), one query each. Devices are picked where the
    // events are; people after each device is given its person.
    let total = try await rows("SELECT toInt64(count()) AS n FROM \(events) WHERE \(matching)").first?["n"].int ?? 0
    let parts = Int(max(1, min(1_000, (total + Self.funnelPart - 1) / Self.funnelPart)))
    var reached = Array(repeating: Int64(0), count: steps.count)
    for part in 0..<parts {
      let picked =
        parts == 1
        ? all
        : people
          ? FunnelPart(matching: matching, units: " WHERE cityHash64(unit_id) % \(parts) = \(part)")
          : FunnelPart(matching: matching + " AND cityHash64(device_id) % \(parts) = \(part)", units: "")
      let found = try await funnelPart(filter, picked, people: people, steps: steps, window: window)
      for step in steps.indices { reached[step] += found[step] }
    }
    return Funnel(reached: reached, steps: steps, window: window, appVersion: appVersion, unit: filter.unit)
  }

  public func funnelEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> [FunnelEvent] {
    let all = FunnelPart(matching: Self.matching(filter, steps: steps), units: "")
    // Counting the step events costs little here (the sort and the transfer do not): more than
    // `limit` are refused before they are read.
    if let limit {
      let total = try await rows("SELECT toInt64(count()) AS n FROM \(events) WHERE \(all.matching)").first?["n"].int
      if (total ?? 0) > Int64(limit) { throw FunnelPaths.tooManyEvents }
    }
    let walked = walked(all, filter: filter, people: try await countsPeople(filter))
    return Funnel.events(try await rows(walked + (limit.map { " LIMIT \(Int64($0) + 1)" } ?? "")))
  }

  /// The filter's events of the steps, as a condition.
  private static func matching(_ filter: ReportFilter, steps: [String]) -> String {
    "\(conditions(filter)) AND name IN \(ClickHouseSQL.list(Set(steps).sorted()))"
  }

  /// The step events of one query: events `matching`, of the units `units` picks (a `WHERE` on
  /// `unit_id`, or empty).
  struct FunnelPart {
    var matching: String
    var units: String
  }

  /// The step events of `part`, each with its unit (`unit_id`).
  private func stepEvents(_ part: FunnelPart, filter: ReportFilter, people: Bool) -> String {
    guard people else {
      return "SELECT device_id AS unit_id, name, occurred_at, event_id FROM \(self.events) WHERE \(part.matching)"
    }
    let events = "SELECT device_id, name, occurred_at, event_id FROM \(self.events) WHERE \(part.matching)"
    return
      "SELECT unit_id, name, occurred_at, event_id FROM (\(units(of: events, app: filter.storedApp, people: people)))"
      + part.units
  }

  /// How many units of `part` reached each step.
  private func funnelPart(
    _ filter: ReportFilter, _ part: FunnelPart, people: Bool, steps: [String], window: Int64
  ) async throws -> [Int64] {
    let perUnit = unitsQuery(filter, stepEvents(part, filter: filter, people: people), steps: steps, window: window)
    let counted = try await rows(
      "SELECT lo, hi, unfit, toInt64(count()) AS devices FROM (\(perUnit)) GROUP BY lo, hi, unfit")
    var reached = Array(repeating: Int64(0), count: steps.count)
    var leftOver = false
    for row in counted {
      guard row["unfit"].int == 0, row["lo"].int == row["hi"].int else {
        leftOver = true
        continue
      }
      for step in 0..<min(Int(clamping: row["lo"].int ?? 0), steps.count) { reached[step] += row["devices"].int ?? 0 }
    }
    if leftOver {
      var walk = part
      walk.units +=
        (walk.units.isEmpty ? " WHERE " : " AND ")
        + "unit_id IN (SELECT unit_id FROM (\(perUnit)) WHERE unfit = 1 OR lo != hi)"
      let found = Funnel.events(try await rows(walked(walk, filter: filter, people: people)))
      for (step, units) in Funnel.reached(found, steps: steps, window: window).enumerated() {
        reached[step] += units
      }
    }
    return reached
  }

  /// The step events of `part`, as the walk reads them: by unit, time and id (events of one
  /// millisecond keep their tracking order: CoreTracker's ids grow with each event).
  private func walked(_ part: FunnelPart, filter: ReportFilter, people: Bool) -> String {
    "SELECT unit_id AS unit_key, name, occurred_at AS t FROM (\(stepEvents(part, filter: filter, people: people))) "
      + "ORDER BY unit_key, t, event_id"
  }

  /// One row per unit of `stepEvents` (``stepEvents(_:filter:people:)``): `lo` and `hi`, its
  /// furthest step under the narrow and the wide scaled window, and `unfit` when it has more than K
  /// events in one millisecond.
  private func unitsQuery(_ filter: ReportFilter, _ stepEvents: String, steps: [String], window: Int64) -> String {
    let scale = Self.funnelScale
    let block = Int64(Int32.max) / scale
    let from = ClickHouseSQL.literal(filter.from)
    // The unit's step events ordered as the walk orders them, and each one's rank in its ms.
    let key = "groupArray((occurred_at, event_id))"
    let sorted =
      "SELECT unit_id, arraySort((x, k) -> k, groupArray(occurred_at), \(key)) AS ts, "
      + "arraySort((x, k) -> k, groupArray(name), \(key)) AS ns FROM (\(stepEvents)) GROUP BY unit_id"
    let ranked =
      "SELECT unit_id, t - \(from) AS rel, name, r, (t - \(from)) * \(scale) + r - 1 AS tk "
      + "FROM (\(sorted)) ARRAY JOIN ts AS t, ns AS name, arrayEnumerateUniq(ts) AS r"
    // Each event in its block, and also in the block before when it lies in the first W ms.
    let blockOf = "intDiv(rel, \(block))"
    let blocks =
      "if(\(blockOf) > 0 AND rel - \(blockOf) * \(block) <= \(window), [\(blockOf) - 1, \(blockOf)], [\(blockOf)])"
    let conditions = steps.enumerated().map { index, step in
      "name = \(ClickHouseSQL.literal(step))" + (index == 0 ? " AND rel < (g + 1) * \(block)" : "")
    }.joined(separator: ", ")
    let time = "toUInt32(tk - g * \(block * scale))"
    let perBlock =
      "SELECT unit_id, g, windowFunnel(\(window * scale))(\(time), \(conditions)) AS lo, "
      + "windowFunnel(\(window * scale + scale - 1))(\(time), \(conditions)) AS hi, max(r) AS mr "
      + "FROM (\(ranked)) ARRAY JOIN \(blocks) AS g GROUP BY unit_id, g"
    return
      "SELECT unit_id, max(lo) AS lo, max(hi) AS hi, toUInt8(max(mr) > \(scale)) AS unfit FROM (\(perBlock)) "
      + "GROUP BY unit_id"
  }
}
