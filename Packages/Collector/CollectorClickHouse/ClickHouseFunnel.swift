public import CollectorReports
import CollectorStore
import CollectorWire

/// The funnel on ClickHouse: the same furthest step per person or device as the SQL engines' walk
/// (``Funnel/reached(_:steps:window:)``), walked by the collector over each unit's step events,
/// which the server groups.
///
/// The server reads the range's step events once and groups them by device (its 64-bit hash), each
/// event packed as `time << 5 | name` (``PackedFunnelWalk``): 8 bytes an event, sent as
/// `RowBinary` and walked device by device as the answer arrives
/// (``ClickHouseClient/stream(_:settings:from:_:)``), so the collector holds one device's events at
/// a time and the server's grouping spills to its disk past ``FunnelLimits/spillBytes``. The walk
/// is the SQL engines' (a step named again, any window, any range), so the answers are theirs by
/// construction.
///
/// A packed event has no id, which orders one millisecond's events (tracking order): a unit with
/// two step events of different names in one millisecond is
/// walked again from its rows, ``FunnelLimits/tiedListed`` units to a query.
///
/// Counting people, only the devices of people with two or more devices are mapped to their person,
/// by the collector (read first, by hash; their events are held until the answer ends and walked
/// as the person's): a person with one device reaches what that device reaches, so it counts once
/// either way, and the server joins nothing.
extension ClickHouseReports {
  /// What one funnel asks of the server (``ClickHouseReports/funnelLimits``).
  package struct FunnelLimits: Sendable {
    /// Past this much memory, the grouping of the step events by unit is spilled to the server's
    /// disk: `max_bytes_before_external_group_by` (8 bytes an event; the 20-step funnel at 100M
    /// groups 73M events).
    package var spillBytes: Int64 = 2_000_000_000
    /// How many tied units one query walking them names, at most (about 20 bytes each).
    package var tiedListed = 2_000
  }

  public func funnel(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?) async throws
    -> Funnel
  {
    let filter = try Funnel.filter(filter, steps: steps, window: window, appVersion: appVersion)
    let matching = Self.matching(filter, steps: steps)
    let people = try await countsPeople(filter)
    let walk = PackedFunnelWalk(steps: steps, window: window)
    let packed =
      "toInt64((occurred_at - \(ClickHouseSQL.literal(filter.from))) * \(1 << PackedFunnelWalk.nameBits) "
      + "+ indexOf([\(walk.names.dropFirst().map(ClickHouseSQL.literal).joined(separator: ", "))], name))"
    let walked = try await stream(
      "SELECT \(Self.deviceHash) AS unit, groupArray(\(packed)) FROM \(events) WHERE \(matching) GROUP BY unit "
        + "FORMAT RowBinary",
      settings: ["max_bytes_before_external_group_by": String(funnelLimits.spillBytes)],
      from: { [self] in FunnelRows(walk: walk, owners: people ? try await owners(filter) : [:]) }
    ) { try $0.take($1) }.finished()
    var reached = walked.walk.reached
    // The tied units, walked from their rows (their events by time and id).
    let listed = max(1, funnelLimits.tiedListed)
    for start in stride(from: 0, to: walked.tied.count, by: listed) {
      let units = ClickHouseSQL.list(walked.tied[start..<min(walked.tied.count, start + listed)])
      let part = stepEvents(ofUnits: units, matching, filter: filter, people: people)
      let found = try await walkedPart(filter, part, people: people, steps: steps, window: window)
      for step in steps.indices { reached[step] += found[step] }
    }
    return Funnel(reached: reached, steps: steps, window: window, appVersion: appVersion, unit: filter.unit)
  }

  public func funnelEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> [FunnelEvent] {
    let all = FunnelPart(matching: Self.matching(filter, steps: steps), units: "")
    // Counting the step events costs little here (the sort and the transfer do not): more than
    // `limit` are refused before they are read.
    if let limit, try await stepEventCount(all.matching) > Int64(limit) {
      throw FunnelPaths.tooManyEvents
    }
    let walked = walked(all, filter: filter, people: try await countsPeople(filter), counting: false)
    return Funnel.events(try await rows(walked + (limit.map { " LIMIT \(Int64($0) + 1)" } ?? "")))
  }

  /// How many step events `matching` picks.
  private func stepEventCount(_ matching: String) async throws -> Int64 {
    try await rows("SELECT toInt64(count()) AS n FROM \(events) WHERE \(matching)").first?["n"].int ?? 0
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

  /// The step events of `part`, each with its unit (`unit_id`) and, counting, the unit's 64-bit hash
  /// (`unit_hash`). Counting, a device of a person with one device stays itself (the person counts
  /// once either way, and only people with several devices are looked up); listing
  /// (`counting: false`), every identified device is its person, as the drill-downs name people.
  private func stepEvents(_ part: FunnelPart, filter: ReportFilter, people: Bool, counting: Bool) -> String {
    guard people else {
      let devices =
        "SELECT device_id AS unit_id, \(Self.deviceHash) AS unit_hash, name, occurred_at, event_id "
        + "FROM \(self.events) WHERE \(part.matching)"
      return part.units.isEmpty ? devices : "SELECT * FROM (\(devices))\(part.units)"
    }
    let events = "SELECT device_id, name, occurred_at, event_id FROM \(self.events) WHERE \(part.matching)"
    guard counting else {
      return
        "SELECT unit_id, name, occurred_at, event_id FROM (\(units(of: events, app: filter.storedApp, people: true, key: .ids)))"
        + part.units
    }
    // The unit's hash from the device's or the person's, not from `unit_id` (a string built per event).
    return
      "SELECT unit_id, unit_hash, name, occurred_at, event_id FROM ("
      + "SELECT \(UnitKey.ids.unitOfPerson) AS unit_id, \(UnitKey.hashes.unitOfPerson) AS unit_hash, name, occurred_at, "
      + "event_id FROM (SELECT device_id, \(Self.deviceHash) AS device, name, occurred_at, event_id "
      + "FROM \(self.events) WHERE \(part.matching)) ANY LEFT JOIN (\(sharedPersons(filter))) USING device_id)\(part.units)"
  }

  /// The person of each device of a person with two or more devices, by their hashes (as
  /// ``FunnelRows`` maps them): read while the server groups the step events.
  private func owners(_ filter: ReportFilter) async throws -> [UInt64: UInt64] {
    let sql = "SELECT \(Self.deviceHash), \(UnitKey.personHash) FROM (\(sharedPersons(filter))) FORMAT RowBinary"
    return try await stream(sql, from: { HashPairs() }) { $0.take($1) }.finished()
  }

  /// Each device of a person with two or more devices, and its person (`device_id`, `person`).
  private func sharedPersons(_ filter: ReportFilter) -> String {
    let persons = schema.personOfDevice(app: ClickHouseSQL.literal(filter.storedApp), key: .ids)
    return
      "SELECT device_id, person FROM (\(persons)) WHERE person IN "
      + "(SELECT person FROM (\(persons)) GROUP BY person HAVING count() > 1)"
  }

  /// The step events of the units whose hashes are `units` (a list), picked by their devices before
  /// any join: a device's own hash, or a device of a person among them (the persons of every shard:
  /// a person's devices may be on several).
  private func stepEvents(
    ofUnits units: String, _ matching: String, filter: ReportFilter, people: Bool
  ) -> FunnelPart {
    let devices =
      people
      ? "(\(Self.deviceHash) IN \(units) OR device_id GLOBAL IN "
        + "(SELECT device_id FROM (\(sharedPersons(filter))) WHERE \(UnitKey.personHash) IN \(units)))"
      : "\(Self.deviceHash) IN \(units)"
    return FunnelPart(matching: "\(matching) AND \(devices)", units: " WHERE unit_hash IN \(units)")
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
}
