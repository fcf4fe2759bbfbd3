public import CollectorReports
import CollectorStore
import CollectorWire

/// The funnel on ClickHouse: the same furthest step per person or device as the SQL engines' walk
/// (``Funnel/reached(_:steps:window:)``), walked by the collector over each unit's step events,
/// which the server groups.
///
/// The server reads the range's step events once and groups them by device (its 64-bit hash), each
/// event packed as `time << 5 | name` (``PackedFunnelWalk``): 8 bytes an event, sent as
/// `Native` blocks and walked device by device as the answer arrives
/// (``ClickHouseClient/stream(_:settings:from:_:)``), so the collector holds one device's events at
/// a time and the server's grouping spills to its disk past ``FunnelLimits/spillBytes``. The walk
/// is the SQL engines' (a step named again, any window, any range), so the answers are theirs by
/// construction. Where the closed days answer, their clean days come from the build's step times
/// instead, one row per step name and device, with the rest of the range's
/// (``closedStepRows(_:names:matching:place:format:closed:sorted:)``): 2–2.5× faster at 10M and
/// 100M events. Each of those rows names its step once and sends each time in 4 bytes (ms from the
/// range's start, ``FunnelRowFormat``) where the range allows. They are read as the server reads
/// them, not sorted, and gathered by the collector, which walks them on every core once the answer
/// ends (``GatheredFunnelRows``; up to
/// ``FunnelLimits/gatheredEvents``, past which they are read again sorted by device, a unit at a
/// time): the server's sort waited for every row before sending one (`Docs/Benchmarks.md`).
///
/// Counting people, only the devices of people with two or more devices are mapped to their person,
/// by the collector (read while the server groups, by hash; their events are held until the answer
/// ends and walked as the person's): a person with one device reaches what that device reaches, so
/// it counts once either way, and the server joins nothing.
///
/// A packed event has no id, which orders one millisecond's events (tracking order): a unit with
/// two step events of different names in one millisecond is walked again with the ids of those
/// milliseconds' events (``tiedReached(_:_:matching:walk:window:steps:closed:)``).
extension ClickHouseReports {
  /// What one funnel asks of the server (``ClickHouseReports/funnelLimits``).
  package struct FunnelLimits: Sendable {
    /// Past this much memory, the grouping of the step events by unit is spilled to the server's
    /// disk: `max_bytes_before_external_group_by` (8 bytes an event; the 20-step funnel at 100M
    /// groups 73M events).
    package var spillBytes: Int64 = 2_000_000_000
    /// How many tied units one query walking them names, at most (their devices' hashes, about 20
    /// bytes each).
    package var tiedListed = 2_000
    /// How many step events the collector gathers from the closed days' rows before walking them
    /// (4 bytes each, 8 for a range over 49.7 days, kept in the answer's pieces as they came: at
    /// most 1 GB, and about 40 bytes a row; the
    /// 20-step funnel at 100M events reads 73M), at most
    /// ``GatheredFunnelRows/mostEver``. A funnel with more reads its rows sorted by the server
    /// instead, one unit at a time.
    package var gatheredEvents = 125_000_000
  }

  public func funnel(_ filter: ReportFilter, steps: [String], window: Int64, appVersion: String?) async throws
    -> Funnel
  {
    let filter = try Funnel.filter(filter, steps: steps, window: window, appVersion: appVersion)
    let names = Self.names(steps)
    let matching = Self.matching(filter, names: names)
    let people = try await countsPeople(filter)
    let walk = PackedFunnelWalk(steps: steps, window: window)
    let place = "indexOf([\(walk.names.dropFirst().map(ClickHouseSQL.literal).joined(separator: ", "))], name)"
    let packed =
      "toInt64((occurred_at - \(ClickHouseSQL.literal(filter.from))) * \(1 << PackedFunnelWalk.nameBits) + \(place))"
    let named = FunnelRowFormat.named(names: walk.names.count, span: filter.to - filter.from)
    let clean = try await closedDays(filter)
    let closed: ((_ sorted: Bool) -> String)? = clean.map { days in
      { [self] in
        closedStepRows(filter, names: names, matching: matching, place: place, format: named, closed: days, sorted: $0)
      }
    }
    let walked = try await walkedRows(
      filter, matching: matching, packed: packed, people: people, walk: walk, closed: closed.map { ($0, named) })
    // The tied units, walked with their tied events' ids as the SQL engines walk (by time and id).
    let tied = try await tiedReached(
      walked, filter, matching: matching, walk: walk, window: window, steps: steps, closed: clean)
    let reached = zip(walked.reached, tied).map { $0 + $1 }
    return Funnel(reached: reached, steps: steps, window: window, appVersion: appVersion, unit: filter.unit)
  }

  /// The funnel's units walked: where a build answers, its rows (`closed`, sorted or not) gathered
  /// in the order read and walked at once (``GatheredFunnelRows``), unless more than
  /// ``FunnelLimits/gatheredEvents`` come; then, or without a build, the rows of one unit after
  /// another, each walked as it arrives (``FunnelRows``): the closed rows sorted, or the events
  /// `matching` the funnel grouped by device.
  private func walkedRows(
    _ filter: ReportFilter, matching: String, packed: String, people: Bool, walk: PackedFunnelWalk,
    closed: (rows: (Bool) -> String, format: FunnelRowFormat)?
  ) async throws -> WalkedFunnel {
    let spill = String(funnelLimits.spillBytes)
    let settings = ["max_bytes_before_external_group_by": spill, "max_bytes_before_external_sort": spill]
    let ofPeople: @Sendable () async throws -> OwnedDevices = { [self] in
      people ? try await owners(filter) : .none
    }
    if let closed {
      // The people's devices are read beside the rows, needed only once they have all come.
      async let owners = ofPeople()
      let most = funnelLimits.gatheredEvents
      let format = closed.format
      let gathered = try await stream(
        closed.rows(false) + " FORMAT Native", settings: settings,
        from: { GatheredFunnelRows(walk: walk, format: format, most: most) }, { try $0.take($1) })
      if let walked = try await gathered.finished(owners: try await owners) { return walked }
    }
    let rows =
      closed?.rows(true)
      ?? "SELECT \(Self.deviceHash) AS unit, groupArray(\(packed)) FROM \(events) WHERE \(matching) GROUP BY unit"
    let format = closed?.format ?? .packed(names: walk.names.count, span: filter.to - filter.from)
    return try await stream(
      rows + " FORMAT Native", settings: settings,
      from: { FunnelRows(walk: walk, format: format, owners: try await ofPeople()) }
    ) { try $0.take($1) }.finished()
  }

  public func funnelEvents(_ filter: ReportFilter, steps: [String], limit: Int?) async throws -> [FunnelEvent] {
    let matching = Self.matching(filter, names: Self.names(steps))
    // Counting the step events costs little here (the sort and the transfer do not): more than
    // `limit` are refused before they are read.
    if let limit, try await stepEventCount(matching) > Int64(limit) {
      throw FunnelPaths.tooManyEvents
    }
    let events = "SELECT device_id, name, occurred_at, event_id FROM \(self.events) WHERE \(matching)"
    // Every identified device is its person, as the drill-downs name people.
    let units =
      try await countsPeople(filter)
      ? "SELECT unit_id, name, occurred_at, event_id FROM (\(units(of: events, app: filter.storedApp, people: true, key: .ids)))"
      : "SELECT device_id AS unit_id, name, occurred_at, event_id FROM (\(events))"
    // Events of one millisecond keep their tracking order: CoreTracker's ids grow with each event.
    let walked = "SELECT unit_id AS unit_key, name, occurred_at AS t FROM (\(units)) ORDER BY unit_key, t, event_id"
    return Funnel.events(try await rows(walked + (limit.map { " LIMIT \(Int64($0) + 1)" } ?? "")))
  }

  /// How many step events `matching` picks.
  private func stepEventCount(_ matching: String) async throws -> Int64 {
    try await rows("SELECT toInt64(count()) AS n FROM \(events) WHERE \(matching)").first?["n"].int ?? 0
  }

  /// The filter's events of the step `names` (a list, ``names(_:)``), as a condition.
  private static func matching(_ filter: ReportFilter, names: String) -> String {
    "\(conditions(filter)) AND name IN \(names)"
  }

  /// The steps' distinct names, as a list.
  private static func names(_ steps: [String]) -> String { ClickHouseSQL.list(Set(steps).sorted()) }

  /// The person of each device of a person with two or more devices, by their hashes (as
  /// ``FunnelRows`` maps them): read while the server groups the step events. The device-to-person
  /// rows are read as stored and each device's earliest picked here (``FirstPersons``); the server
  /// picks only for the rare devices with two people in their first millisecond, by event id.
  private func owners(_ filter: ReportFilter) async throws -> OwnedDevices {
    let app = ClickHouseSQL.literal(filter.storedApp)
    let rows =
      "SELECT cityHash64(device_id), \(UnitKey.personHash), first_ms FROM \(schema.persons) WHERE app = \(app)"
    var (firsts, tied) = try await stream(rows + " FORMAT RowBinary", from: { FirstPersons() }) { $0.take($1) }
      .finished().firsts()
    if !tied.isEmpty {
      // Past a few thousand, every device's person as the server picks them.
      let among = tied.count > Self.tiedPersonsListed ? nil : tied.map(String.init).joined(separator: ", ")
      let picked = schema.personOfDevice(app: app, key: .hashes, among: among)
      let sql = "SELECT device, \(UnitKey.personHash), toInt64(0) FROM (\(picked)) FORMAT RowBinary"
      let settled = try await stream(sql, from: { FirstPersons() }) { $0.take($1) }.finished().firsts().firsts
      if among == nil {
        firsts = settled
      } else {
        let person = Dictionary(settled, uniquingKeysWith: { first, _ in first })
        firsts = firsts.map { ($0.device, person[$0.device] ?? $0.person) }
      }
    }
    return OwnedDevices(firsts: firsts)
  }

  /// How many tied devices (``FirstPersons/firsts()``) one query picking their people names, at most.
  static let tiedPersonsListed = 5_000
}
