public import CollectorReports
import CollectorStore
import CollectorWire

/// The funnel on ClickHouse: the same furthest step per device as the SQL engines' walk
/// (``SQLReports/reached(_:steps:window:)``), computed by the server with `windowFunnel`.
///
/// Two limits of `windowFunnel` in 18.16 shape the query, and neither may change an answer:
/// - It breaks ties between events of one millisecond by step, the walk by tracking order (the
///   event id). So each event's time is made unique and ordered as the walk orders: `T = ms × K +
///   rank`, the rank counting the device's earlier events of the same millisecond by id (K = 16).
///   Scaled so, a window can no longer be told exactly: `windowFunnel(W × K)` finds only chains the
///   walk finds and `windowFunnel(W × K + K − 1)` every chain it finds, so where both give one level
///   it is the walk's.
/// - It keeps chain starts as signed 32-bit numbers: a start at 2^31 or later is lost. So the range
///   is cut into blocks of `2^31 / K` ms and each device's events are funnelled per block, times
///   counted from the block's start; a block also holds the first `W` ms of the next one (where its
///   chains can end), but starts only in its own. A device's level is its best block's.
///
/// The devices where the two windows disagree or that have more than K events in one millisecond,
/// and funnels whose window is over 1.5 days or that name a step twice (one event would match two
/// steps), are walked by the collector from their rows, as the SQL engines do.
extension ClickHouseReports {
  /// Events of one millisecond per device that the scaled times keep apart.
  static let funnelScale: Int64 = 16
  /// Step events funnelled in one query, at most (about 1 GB of the server's memory).
  static let funnelPart: Int64 = 4_000_000

  public func funnel(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?) async throws
    -> Funnel
  {
    let filter = try SQLReports.funnelFilter(filter, steps: steps, window: window, appVersion: appVersion)
    let matching = "\(Self.conditions(filter)) AND name IN \(ClickHouseSQL.list(Set(steps).sorted()))"
    let scale = Self.funnelScale
    guard Set(steps).count == steps.count, window <= (Int64(Int32.max) - scale) / scale else {
      let found = try await rows(walked(matching, devices: ""))
      return SQLReports.funnel(found, steps: steps, window: window, appVersion: appVersion)
    }
    // A device's events are held in memory while it is funnelled: devices are taken in parts of
    // about 4 million step events (by a hash of the device), one query each.
    let total = try await rows("SELECT toInt64(count()) AS n FROM \(events) WHERE \(matching)").first?["n"].int ?? 0
    let parts = Int(max(1, min(1_000, (total + Self.funnelPart - 1) / Self.funnelPart)))
    var reached = Array(repeating: Int64(0), count: steps.count)
    for part in 0..<parts {
      let devices = parts == 1 ? "" : " AND cityHash64(device_id) % \(parts) = \(part)"
      let found = try await funnelPart(filter, matching: matching + devices, steps: steps, window: window)
      for step in steps.indices { reached[step] += found[step] }
    }
    return SQLReports.funnel(reached: reached, steps: steps, window: window, appVersion: appVersion)
  }

  /// How many devices of `matching` reached each step.
  private func funnelPart(_ filter: ReportFilter, matching: String, steps: [String], window: Int64) async throws
    -> [Int64]
  {
    let perDevice = devicesQuery(filter, matching: matching, steps: steps, window: window)
    let counted = try await rows(
      "SELECT lo, hi, unfit, toInt64(count()) AS devices FROM (\(perDevice)) GROUP BY lo, hi, unfit")
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
      let devices = " AND device_id IN (SELECT device_id FROM (\(perDevice)) WHERE unfit = 1 OR lo != hi)"
      let found = try await rows(walked(matching, devices: devices))
      for (step, devices) in SQLReports.reached(found, steps: steps, window: window).enumerated() {
        reached[step] += devices
      }
    }
    return reached
  }

  /// The step events of `matching` (and `devices`), as the walk reads them: by device, time and id
  /// (events of one millisecond keep their tracking order: CoreTracker's ids grow with each event).
  private func walked(_ matching: String, devices: String) -> String {
    "SELECT device_id, name, occurred_at AS t FROM \(events) WHERE \(matching)\(devices) ORDER BY device_id, t, event_id"
  }

  /// One row per device: `lo` and `hi`, its furthest step under the narrow and the wide scaled
  /// window, and `unfit` when it has more than K events in one millisecond.
  private func devicesQuery(_ filter: ReportFilter, matching: String, steps: [String], window: Int64) -> String {
    let scale = Self.funnelScale
    let block = Int64(Int32.max) / scale
    let from = ClickHouseSQL.literal(filter.from)
    // The device's step events ordered as the walk orders them, and each one's rank in its ms.
    let key = "groupArray((occurred_at, event_id))"
    let sorted =
      "SELECT device_id, arraySort((x, k) -> k, groupArray(occurred_at), \(key)) AS ts, "
      + "arraySort((x, k) -> k, groupArray(name), \(key)) AS ns FROM \(events) WHERE \(matching) GROUP BY device_id"
    let ranked =
      "SELECT device_id, t - \(from) AS rel, name, r, (t - \(from)) * \(scale) + r - 1 AS tk "
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
      "SELECT device_id, g, windowFunnel(\(window * scale))(\(time), \(conditions)) AS lo, "
      + "windowFunnel(\(window * scale + scale - 1))(\(time), \(conditions)) AS hi, max(r) AS mr "
      + "FROM (\(ranked)) ARRAY JOIN \(blocks) AS g GROUP BY device_id, g"
    return
      "SELECT device_id, max(lo) AS lo, max(hi) AS hi, toUInt8(max(mr) > \(scale)) AS unfit FROM (\(perBlock)) "
      + "GROUP BY device_id"
  }
}
