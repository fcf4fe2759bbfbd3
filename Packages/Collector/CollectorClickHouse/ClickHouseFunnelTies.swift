import CollectorReports
import CollectorStore

/// The funnel's tied units: those with two step events of different names in one millisecond, which
/// a packed event cannot order (the SQL engines order one millisecond's events by id: tracking
/// order).
extension ClickHouseReports {
  /// How many of `walked`'s tied units reached each step, walked as the SQL engines walk: each
  /// unit's packed events as they came, except those of its tied milliseconds, which are read again
  /// with their ids, ``FunnelLimits/tiedListed`` units a query. The query names those milliseconds,
  /// so the server reads only their granules' rows beyond the times; reading every step event of
  /// the units' devices hashed every step event's device id (1.8 s of the 3-step funnel at 100M
  /// events, for 477 units: `Docs/Benchmarks.md`).
  func tiedReached(
    _ walked: WalkedFunnel, _ filter: ReportFilter, matching: String, walk: PackedFunnelWalk, window: Int64,
    steps: [String]
  ) async throws -> [Int64] {
    var reached = Array(repeating: Int64(0), count: steps.count)
    let units = walked.tied.keys.sorted()
    let (bits, mask) = (PackedFunnelWalk.nameBits, Int64(1) << PackedFunnelWalk.nameBits - 1)
    // One device of each tied person: their packed events are named by it.
    var deviceOf: [UInt64: UInt64] = [:]
    for (device, person) in walked.owners where walked.tied[person] != nil {
      deviceOf[person] = min(deviceOf[person] ?? device, device)
    }
    let listed = max(1, funnelLimits.tiedListed)
    for start in stride(from: 0, to: units.count, by: listed) {
      let batch = units[start..<min(units.count, start + listed)]
      let (devices, persons) = walked.devices(of: batch)
      let tied = Dictionary(uniqueKeysWithValues: batch.map { ($0, Self.tiedTimes(walked.tied[$0] ?? [])) })
      let times = Set(tied.values.joined()).map { filter.from + $0 }.sorted()
      let found = try await rows(
        "SELECT toString(hash) AS device_id, name, t, event_id FROM (SELECT \(Self.deviceHash) AS hash, name, "
          + "occurred_at AS t, event_id FROM \(events) WHERE \(matching) AND occurred_at IN \(ClickHouseSQL.list(times)) "
          + "AND hash IN \(ClickHouseSQL.list(devices)))")
      var columns = StepEventColumns()
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

  /// The times (ms from the range's start) at which packed `events` (sorted) hold two names.
  static func tiedTimes(_ events: [Int64]) -> Set<Int64> {
    var times = Set<Int64>()
    for index in events.indices.dropFirst() where PackedFunnelWalk.tied(events[index - 1], events[index]) {
      times.insert(events[index] >> PackedFunnelWalk.nameBits)
    }
    return times
  }
}
