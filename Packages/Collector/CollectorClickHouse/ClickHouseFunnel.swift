public import CollectorReports
import CollectorStore
import CollectorWire

/// The funnel on ClickHouse: the same furthest step per person or device as the SQL engines' walk
/// (``Funnel/reached(_:steps:window:)``), computed by the server with `windowFunnel` over each
/// unit's step events, times in milliseconds.
///
/// Two limits of `windowFunnel` in 18.16 shape the query, and neither may change an answer:
/// - It breaks ties between events of one millisecond by step, the walk by tracking order (the
///   event id). Where a unit's step events all have different times the two agree; a unit with two
///   in one millisecond (`count() > uniq(time)`: `uniq` can only count fewer, never more) is walked
///   by the collector from its rows, as the SQL engines walk every unit.
/// - It keeps chain starts as signed 32-bit numbers: a start at 2^31 ms (24.8 days) or later is
///   lost. So the range is cut into blocks of 2^31 − 1 ms and each unit's events are funnelled once
///   per block, in one pass, times counted from the block's start; a block's funnel also takes the
///   first `W` ms after it (where its chains can end), but starts only in the block. A unit's level
///   is its best block's.
///
/// Counting people, only the devices of people with two or more devices are mapped to their person:
/// a person with one device reaches what that device reaches, so it counts once either way.
///
/// A step may be named again (`view → cart → view`): an event matching steps `j` and `k` feeds both,
/// each from the chain of the step before it, as the walk's does, in whichever order the server
/// takes one event's matches. Only neighbours sharing a name (`view → view`) are walked by the
/// collector: there that order decides whether one event is both steps (the walk needs two events,
/// ``Funnel/walk(_:steps:window:timed:)``), and `windowFunnel` does not promise it.
extension ClickHouseReports {
  /// The times of one block: chain starts below 2^31 ms.
  static let funnelBlock = Int64(Int32.max)

  /// How much one funnel query takes at most (``ClickHouseReports/funnelParts``).
  package struct FunnelParts: Sendable {
    /// Funnelled on the server, in (time, step) pairs: an event is one per step its name matches
    /// (25–45 bytes of the server's memory each, grouping included: 40M, 1–1.8 GB). Measured in
    /// Benchmarks.md.
    package var onServer: Int64 = 40_000_000
    /// Past this much memory, a part's grouping is spilled to the server's disk rather than fail
    /// (``onServer`` is an estimate): `max_bytes_before_external_group_by`.
    package var spillBytes: Int64 = 2_000_000_000
    /// Walked by the collector: about 70 MB of rows, inside the client's 256 MB answer.
    package var walked: Int64 = 1_000_000
    /// How many tied units one query walking them names, at most (about 40 bytes each, inside the
    /// server's 256 KB of query text); a part with more walks its own, picked by a query.
    package var tiedListed = 2_000
  }

  public func funnel(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?) async throws
    -> Funnel
  {
    let filter = try Funnel.filter(filter, steps: steps, window: window, appVersion: appVersion)
    let matching = Self.matching(filter, steps: steps)
    let people = try await countsPeople(filter)
    // Neighbours sharing a name, or a window past a block, are walked here instead; either way
    // units are taken in parts (by a hash of the unit), one query each, so that a unit's events
    // are held in the server's memory (about 40 million (time, step) pairs a part) or in the
    // collector's (1 million step events: a walked part's rows come over the wire) one part at a
    // time. Every part reads all the range's step events: fewer parts cost less.
    let onServer = zip(steps, steps.dropFirst()).allSatisfy { $0 != $1 } && window <= Self.funnelBlock
    let total = try await stepEventCount(matching, steps: steps, pairs: onServer)
    let size = onServer ? funnelParts.onServer : funnelParts.walked
    let parts = Int(max(1, min(1_000, (total + size - 1) / size)))
    var reached = Array(repeating: Int64(0), count: steps.count)
    func add(_ found: [Int64]) { for step in steps.indices { reached[step] += found[step] } }
    var tied: [String] = []
    for part in 0..<parts {
      let picked =
        parts == 1
        ? FunnelPart(matching: matching, units: "")
        : people
          ? FunnelPart(matching: matching, units: " WHERE cityHash64(unit_id) % \(parts) = \(part)")
          : FunnelPart(matching: matching + " AND cityHash64(device_id) % \(parts) = \(part)", units: "")
      if onServer {
        let found = try await funnelPart(filter, picked, people: people, steps: steps, window: window)
        add(found.reached)
        tied += found.tied
      } else {
        add(try await walkedPart(filter, picked, people: people, steps: steps, window: window))
      }
    }
    // The units `windowFunnel` may not count, of every part, walked together: each read of the
    // step events costs what a part's does, whatever the few units it keeps.
    let listed = max(1, funnelParts.tiedListed)
    for start in stride(from: 0, to: tied.count, by: listed) {
      let units = ClickHouseSQL.list(tied[start..<min(tied.count, start + listed)].sorted())
      let walk =
        people
        ? FunnelPart(matching: matching, units: " WHERE unit_id IN \(units)")
        : FunnelPart(matching: matching + " AND device_id IN \(units)", units: "")
      add(try await walkedPart(filter, walk, people: people, steps: steps, window: window))
    }
    return Funnel(reached: reached, steps: steps, window: window, appVersion: appVersion, unit: filter.unit)
  }

  public func funnelEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> [FunnelEvent] {
    let all = FunnelPart(matching: Self.matching(filter, steps: steps), units: "")
    // Counting the step events costs little here (the sort and the transfer do not): more than
    // `limit` are refused before they are read.
    if let limit, try await stepEventCount(all.matching, steps: steps, pairs: false) > Int64(limit) {
      throw FunnelPaths.tooManyEvents
    }
    let walked = walked(all, filter: filter, people: try await countsPeople(filter), counting: false)
    return Funnel.events(try await rows(walked + (limit.map { " LIMIT \(Int64($0) + 1)" } ?? "")))
  }

  /// How many step events `matching` picks, or (`pairs`) how many (time, step) pairs
  /// `windowFunnel` keeps for them: one per step an event's name matches (`screen_view` in a
  /// funnel naming it nine times is nine).
  private func stepEventCount(_ matching: String, steps: [String], pairs: Bool) async throws -> Int64 {
    let names = Dictionary(steps.map { ($0, 1) }, uniquingKeysWith: +).sorted { $0.key < $1.key }
    let from = names.map { ClickHouseSQL.literal($0.key) }.joined(separator: ", ")
    let to = names.map { String($0.value) }.joined(separator: ", ")
    let counted = pairs ? "sum(transform(name, [\(from)], [\(to)], 0))" : "count()"
    return try await rows("SELECT toInt64(\(counted)) AS n FROM \(events) WHERE \(matching)").first?["n"].int ?? 0
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

  /// The step events of `part`, each with its unit (`unit_id`). Counting, a device of a person with
  /// one device stays itself (the person counts once either way, and only people with several
  /// devices are looked up); listing (`counting: false`), every identified device is its person, as
  /// the drill-downs name people.
  private func stepEvents(_ part: FunnelPart, filter: ReportFilter, people: Bool, counting: Bool) -> String {
    guard people else {
      let devices =
        "SELECT device_id AS unit_id, name, occurred_at, event_id FROM \(self.events) WHERE \(part.matching)"
      return part.units.isEmpty ? devices : "SELECT * FROM (\(devices))\(part.units)"
    }
    let events = "SELECT device_id, name, occurred_at, event_id FROM \(self.events) WHERE \(part.matching)"
    guard counting else {
      return
        "SELECT unit_id, name, occurred_at, event_id FROM (\(units(of: events, app: filter.storedApp, people: true, key: .ids)))"
        + part.units
    }
    let persons = schema.personOfDevice(app: ClickHouseSQL.literal(filter.storedApp), key: .ids)
    let shared =
      "SELECT device_id, person FROM (\(persons)) WHERE person IN "
      + "(SELECT person FROM (\(persons)) GROUP BY person HAVING count() > 1)"
    return
      "SELECT unit_id, name, occurred_at, event_id FROM ("
      + "SELECT \(UnitKey.ids.unitOfPerson) AS unit_id, name, occurred_at, event_id "
      + "FROM (\(events)) ANY LEFT JOIN (\(shared)) USING device_id)\(part.units)"
  }

  /// How many units of `part` reached each step, of those `windowFunnel` may count, and the units
  /// it may not (ties within a millisecond: at 100M about one in a thousand), for the walk. Past
  /// ``FunnelParts/tiedListed`` of them, the part walks them itself, picked by the same per-unit
  /// query (a list would be too long for the server), and names none.
  private func funnelPart(
    _ filter: ReportFilter, _ part: FunnelPart, people: Bool, steps: [String], window: Int64
  ) async throws -> (reached: [Int64], tied: [String]) {
    let stepEvents = stepEvents(part, filter: filter, people: people, counting: true)
    let perUnit = unitsQuery(filter, stepEvents, steps: steps, window: window)
    let counted = try await rows(
      "SELECT level, unfit, if(unfit = 1, unit_id, '') AS tied, toInt64(count()) AS units FROM (\(perUnit)) "
        + "GROUP BY unfit, tied, level",
      settings: ["max_bytes_before_external_group_by": String(funnelParts.spillBytes)])
    var reached = Array(repeating: Int64(0), count: steps.count)
    var tied: [String] = []
    for row in counted {
      if row["unfit"].int == 1 {
        tied.append(row["tied"].text ?? "")
        continue
      }
      for step in 0..<min(Int(clamping: row["level"].int ?? 0), steps.count) { reached[step] += row["units"].int ?? 0 }
    }
    guard tied.count > funnelParts.tiedListed else { return (reached, tied) }
    var walk = part
    walk.units +=
      (walk.units.isEmpty ? " WHERE " : " AND ") + "unit_id IN (SELECT unit_id FROM (\(perUnit)) WHERE unfit = 1)"
    let walked = try await walkedPart(filter, walk, people: people, steps: steps, window: window)
    for (step, units) in walked.enumerated() { reached[step] += units }
    return (reached, [])
  }

  /// How many units of `part` reached each step, walked by the collector from their step events.
  private func walkedPart(
    _ filter: ReportFilter, _ part: FunnelPart, people: Bool, steps: [String], window: Int64
  ) async throws -> [Int64] {
    let events = Funnel.events(try await rows(walked(part, filter: filter, people: people, counting: true)))
    return Funnel.reached(events, steps: steps, window: window)
  }

  /// The step events of `part`, as the walk reads them: by unit, time and id (events of one
  /// millisecond keep their tracking order: CoreTracker's ids grow with each event).
  private func walked(_ part: FunnelPart, filter: ReportFilter, people: Bool, counting: Bool) -> String {
    let events = stepEvents(part, filter: filter, people: people, counting: counting)
    return "SELECT unit_id AS unit_key, name, occurred_at AS t FROM (\(events)) ORDER BY unit_key, t, event_id"
  }

  /// One row per unit of `stepEvents` (``stepEvents(_:filter:people:counting:)``): `level`, its
  /// furthest step, and `unfit` when two of its step events share a millisecond.
  ///
  /// One `windowFunnel` per block of the range, all in one pass: block `b`'s counts only the events
  /// in it or in the first `W` ms after it, times from its start, and starts chains only in it.
  private func unitsQuery(_ filter: ReportFilter, _ stepEvents: String, steps: [String], window: Int64) -> String {
    let block = Self.funnelBlock
    let blocks = max(1, (filter.to - filter.from + block - 1) / block)
    let funnels = (0..<blocks).map { index in
      let (start, end) = (index * block, (index + 1) * block)
      let conditions = steps.enumerated().map { step, name in
        let inBlock = step == 0 ? "rel < \(end)" : "rel <= \(end + window)"
        return "name = \(ClickHouseSQL.literal(name)) AND rel >= \(start) AND \(inBlock)"
      }
      return "windowFunnel(\(window))(toUInt32(rel - \(start)), \(conditions.joined(separator: ", ")))"
    }
    // 18.16's `greatest` takes two arguments.
    let level = funnels.dropFirst().reduce(funnels[0]) { "greatest(\($0), \($1))" }
    return
      "SELECT unit_id, \(level) AS level, toUInt8(count() > uniq(rel)) AS unfit FROM ("
      + "SELECT unit_id, name, occurred_at - \(ClickHouseSQL.literal(filter.from)) AS rel FROM (\(stepEvents))) "
      + "GROUP BY unit_id"
  }
}
