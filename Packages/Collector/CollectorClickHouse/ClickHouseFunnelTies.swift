import CollectorReports
import CollectorStore

/// The funnel's tied units: those with two step events of different names in one millisecond, which
/// a packed event cannot order (the SQL engines order one millisecond's events by id: tracking
/// order).
extension ClickHouseReports {
  /// A unit's tied milliseconds (ms from the range's start), by unit.
  typealias TiedTimes = [UInt64: Set<Int64>]

  /// How many of `walked`'s tied units reached each step, walked as the SQL engines walk: each
  /// unit's packed events as they came, except those of its tied milliseconds, read again in their
  /// order, ``FunnelLimits/tiedListed`` units a query. A device's tied millisecond in a clean day of
  /// the build `closed` is read from the build's ties (``ClickHouseSchema/closedTies``), and a
  /// person's when one device alone holds it; any other (two of a person's devices in one
  /// millisecond, one in the rest of the range, or one the build lacks) from the events, with
  /// their ids.
  func tiedReached(
    _ walked: WalkedFunnel, _ filter: ReportFilter, matching: String, walk: PackedFunnelWalk, window: Int64,
    steps: [String], closed: CleanDays?
  ) async throws -> [Int64] {
    var reached = Array(repeating: Int64(0), count: steps.count)
    let units = walked.tied.keys.sorted()
    let (bits, mask) = (PackedFunnelWalk.nameBits, Int64(1) << PackedFunnelWalk.nameBits - 1)
    // One device of each tied person: their packed events are named by it.
    var deviceOf: [UInt64: UInt64] = [:]
    for (device, person) in walked.owners.pairs where walked.tied[person] != nil {
      deviceOf[person] = min(deviceOf[person] ?? device, device)
    }
    let clean = Set(closed?.days ?? [])
    let listed = max(1, funnelLimits.tiedListed)
    for start in stride(from: 0, to: units.count, by: listed) {
      let batch = units[start..<min(units.count, start + listed)]
      let tied = Dictionary(uniqueKeysWithValues: batch.map { ($0, Self.tiedTimes(walked.tied[$0] ?? [])) })
      let inBuild = tied.mapValues { times in
        times.filter { clean.contains((filter.from + $0) / ClickHouseSchema.dayLength) }
      }
      let (devices, persons) = walked.devices(of: batch)
      var columns = StepEventColumns()
      var found = TiedTimes()
      if let closed {
        let built = BuiltTies(tied: inBuild, devices: devices, persons: persons, walked: walked, names: walk.names)
        found = try await appendBuiltTies(built, filter, build: closed.build, to: &columns)
      }
      var fromEvents = TiedTimes()
      for (unit, times) in tied {
        let rest = times.subtracting(found[unit] ?? [])
        if !rest.isEmpty { fromEvents[unit] = rest }
      }
      if !fromEvents.isEmpty {
        let listed = walked.devices(of: batch.filter { fromEvents[$0] != nil }).devices
        try await appendEventTies(fromEvents, devices: listed, persons: persons, filter, matching, to: &columns)
      }
      for unit in batch {
        let device = String(deviceOf[unit] ?? unit)
        for event in walked.tied[unit] ?? [] where tied[unit]?.contains(event >> bits) != true {
          columns.append(
            device: device, name: walk.names[Int(event & mask)], time: filter.from + event >> bits,
            id: UnsafeRawBufferPointer(start: nil, count: 0))
        }
      }
      let counted = await Funnel.reached(columns, persons: persons, steps: steps, window: window)
      for (step, count) in counted.enumerated() { reached[step] += count }
    }
    return reached
  }

  /// Appends the events of the tied milliseconds `built.tied` that build `build`'s ties hold, in
  /// their order; returns those milliseconds (any other is read from the events). A unit's
  /// millisecond is taken from the build when one of its devices alone holds a row there, of as
  /// many step events as the unit's packed events at that millisecond: a person's two devices in
  /// one millisecond (whose events only ids order) are not.
  private func appendBuiltTies(
    _ built: BuiltTies, _ filter: ReportFilter, build: ClosedBuild, to columns: inout StepEventColumns
  ) async throws -> TiedTimes {
    let times = Set(built.tied.values.joined()).map { filter.from + $0 }.sorted()
    guard !times.isEmpty else { return [:] }
    let found = try await rows(
      "SELECT toString(device) AS device_id, name, time AS t, toInt64(i) AS place "
        + "FROM \(schema.table("closed_name_ties")) ARRAY JOIN names AS name, arrayEnumerate(names) AS i "
        + "WHERE build = \(build.id) AND app = \(ClickHouseSQL.literal(filter.storedApp)) "
        + "AND device IN \(ClickHouseSQL.list(built.devices)) AND time IN \(ClickHouseSQL.list(times)) "
        + "AND name IN \(ClickHouseSQL.list(built.names.dropFirst()))")
    // Each unit's millisecond's rows: (device, name, place).
    var held: [UInt64: [Int64: [(device: String, name: String, place: Int64)]]] = [:]
    for row in found {
      let device = row["device_id"].text ?? ""
      guard let unit = UInt64(built.persons[ExactText(device)] ?? device), let time = row["t"].int,
        built.tied[unit]?.contains(time - filter.from) == true
      else { continue }
      held[unit, default: [:]][time - filter.from, default: []].append(
        (device, row["name"].text ?? "", row["place"].int ?? 0))
    }
    var kept = TiedTimes()
    for (unit, times) in held {
      for (time, events) in times
      where Set(events.map(\.device)).count == 1 && events.count == built.count(of: unit, at: time) {
        kept[unit, default: []].insert(time)
        // Its place among the millisecond's events orders it, as an id would: big-endian bytes.
        for event in events {
          withUnsafeBytes(of: UInt64(event.place).bigEndian) {
            columns.append(device: event.device, name: event.name, time: filter.from + time, id: $0)
          }
        }
      }
    }
    return kept
  }

  /// Appends the events of the units' tied milliseconds `tied` read from the events (of the units'
  /// `devices`, hashes; `persons`, each person's devices' person) with their ids. The query names
  /// those milliseconds, so the server reads only their granules' rows beyond the times (reading
  /// every step event of the units' devices hashed every step event's device id: 1.8 s of the
  /// 3-step funnel at 100M events, for 477 units).
  private func appendEventTies(
    _ tied: TiedTimes, devices: [UInt64], persons: [ExactText: String], _ filter: ReportFilter, _ matching: String,
    to columns: inout StepEventColumns
  ) async throws {
    let times = Set(tied.values.joined()).map { filter.from + $0 }.sorted()
    let found = try await rows(
      "SELECT toString(hash) AS device_id, name, t, event_id FROM (SELECT \(Self.deviceHash) AS hash, name, "
        + "occurred_at AS t, event_id FROM \(events) WHERE \(matching) AND occurred_at IN \(ClickHouseSQL.list(times)) "
        + "AND hash IN \(ClickHouseSQL.list(devices)))")
    for row in found {
      // A row of another unit's tied millisecond is among this unit's packed events already.
      let device = row["device_id"].text ?? ""
      let unit = UInt64(persons[ExactText(device)] ?? device) ?? 0
      guard let time = row["t"].int, tied[unit]?.contains(time - filter.from) == true else { continue }
      var id = row["event_id"].text ?? ""
      id.withUTF8 {
        columns.append(device: device, name: row["name"].text ?? "", time: time, id: UnsafeRawBufferPointer($0))
      }
    }
  }

  /// The times (ms from the range's start) at which packed `events` (sorted) hold two names.
  static func tiedTimes(_ events: [Int64]) -> Set<Int64> {
    var times = Set<Int64>()
    for index in events.indices.dropFirst() where PackedFunnelWalk.tied(events[index - 1], events[index]) {
      times.insert(events[index] >> PackedFunnelWalk.nameBits)
    }
    return times
  }
}

/// What ``ClickHouseReports/tiedReached(_:_:matching:walk:window:steps:closed:)`` asks of the
/// build's ties for a batch of units.
struct BuiltTies {
  /// The units' tied milliseconds in the build's clean days (ms from the range's start).
  var tied: ClickHouseReports.TiedTimes
  /// The units' devices (hashes), and the person of each of them that has one (hashes as text).
  var devices: [UInt64]
  var persons: [ExactText: String]
  /// The walk, holding each unit's packed events (sorted).
  var walked: WalkedFunnel
  /// The funnel's names (``PackedFunnelWalk/names``).
  var names: [String]

  /// How many packed step events `unit` holds at `time`.
  func count(of unit: UInt64, at time: Int64) -> Int {
    (walked.tied[unit] ?? []).lazy.filter { $0 >> PackedFunnelWalk.nameBits == time }.count
  }
}
