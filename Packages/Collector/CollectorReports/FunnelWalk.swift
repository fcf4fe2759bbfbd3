package import CollectorStore

/// One step event of a funnel, as the collector's walk reads it: its person or device (as
/// ``UnitList/units`` names it), its name (one of the steps) and its time in ms since 1970.
public typealias FunnelEvent = (unit: String, name: String, time: Int64)

/// The funnel walked by the collector, from each unit's step events in order: the SQL engines'
/// funnel, the drill-down's paths on every engine, and the units ClickHouse's `windowFunnel`
/// cannot settle.
extension Funnel {
  /// Rows of (`unit_key`, `name`, `t`) as step events, in their order.
  package static func events(_ rows: [SQLRow]) -> [FunnelEvent] {
    rows.map { (unit: $0["unit_key"].text ?? "", name: $0["name"].text ?? "", time: $0["t"].int ?? 0) }
  }

  /// The funnel from step events grouped by unit, each unit's by time and event id.
  package init(
    _ found: [FunnelEvent], steps: [String], window: Int64, appVersion: String?, unit: ReportUnit
  ) {
    self.init(
      reached: Self.reached(found, steps: steps, window: window), steps: steps, window: window, appVersion: appVersion,
      unit: unit)
  }

  /// How many people or devices reached each step, from step events grouped by unit, each unit's
  /// by time and event id.
  package static func reached(_ found: [FunnelEvent], steps: [String], window: Int64) -> [Int64] {
    var reached = Array(repeating: Int64(0), count: steps.count)
    eachUnit(found) { _, events in
      for step in 0..<walk(events, steps: steps, window: window).best { reached[step] += 1 }
    }
    return reached
  }

  /// Calls `body` with each unit and its events, from events grouped by unit.
  static func eachUnit(_ found: [FunnelEvent], _ body: (String, ArraySlice<FunnelEvent>) -> Void) {
    var index = 0
    while index < found.count {
      let unit = found[index].unit
      var end = index
      while end < found.count, found[end].unit == unit { end += 1 }
      body(unit, found[index..<end])
      index = end
    }
  }

  /// Step events in any order, grouped by unit, each unit's ordered by time and event id (events of
  /// one millisecond keep their tracking order: CoreTracker's ids grow with each event). With
  /// `persons` (device to person) a unit is `u:` and the device's person, or `d:` and a device
  /// never identified; without, the device.
  package static func byUnit(_ found: StepEventColumns, persons: [String: String]?) -> [FunnelEvent] {
    // Each device's unit, looked up once per device.
    var units: [String] = []
    var unitNamed: [String: Int] = [:]
    let unitOfDevice = found.devices.map { device in
      let named = persons.map { persons in persons[device].map { "u:" + $0 } ?? "d:" + device } ?? device
      if let known = unitNamed[named] { return known }
      units.append(named)
      unitNamed[named] = units.count - 1
      return units.count - 1
    }
    // The events grouped by unit, units in the order first met (a counting sort; nothing needs
    // them in the units' order: sorting the ids cost a quarter of this function), then each unit's
    // by time and id.
    var starts = Array(repeating: 0, count: units.count + 1)
    for device in found.device { starts[unitOfDevice[Int(device)] + 1] += 1 }
    for index in units.indices { starts[index + 1] += starts[index] }
    var order = Array(repeating: 0, count: found.count)
    var next = starts
    for (event, device) in found.device.enumerated() {
      let unit = unitOfDevice[Int(device)]
      order[next[unit]] = event
      next[unit] += 1
    }
    let times = found.time
    var ordered: [FunnelEvent] = []
    ordered.reserveCapacity(found.count)
    for unit in units.indices {
      order[starts[unit]..<starts[unit + 1]].sort { one, other in
        times[one] != times[other] ? times[one] < times[other] : found.idPrecedes(one, other)
      }
      for event in order[starts[unit]..<starts[unit + 1]] {
        ordered.append((unit: units[unit], name: found.names[Int(found.name[event])], time: times[event]))
      }
    }
    return ordered
  }

  /// The furthest step one person or device reached, in one pass over its events (linear in them,
  /// whatever their number): `latest[k]` is the latest start of a chain that has reached step `k`
  /// within the window of that start. A later start is never worse (it leaves more of the window),
  /// so keeping the latest is exact: the answer is that of walking from every first-step event and
  /// keeping the best attempt. Steps are advanced from the last to the first, so one event never
  /// counts as two steps.
  ///
  /// When `timed`, `fastest[k]` is the unit's quickest chain from a first step to step `k`: an
  /// event reaching `k` from the latest start is the quickest chain ending with it, so the least of
  /// those over the events is the quickest of all (the walk then reads every event).
  static func walk(_ events: ArraySlice<FunnelEvent>, steps: [String], window: Int64, timed: Bool = false)
    -> (best: Int, fastest: [Int64?])
  {
    var latest = [Int64?](repeating: nil, count: steps.count)
    var fastest = [Int64?](repeating: nil, count: timed ? steps.count : 0)
    var best = 0
    for event in events {
      let (name, time) = (event.name, event.time)
      for step in stride(from: steps.count - 1, through: 1, by: -1) where steps[step] == name {
        guard let start = latest[step - 1], time - start <= window else { continue }
        latest[step] = max(latest[step] ?? start, start)
        best = max(best, step + 1)
        if timed { fastest[step] = min(fastest[step] ?? .max, time - start) }
      }
      if steps[0] == name {
        latest[0] = time
        best = max(best, 1)
        if timed { fastest[0] = 0 }
      }
      if best == steps.count, !timed { break }
    }
    return (best, fastest)
  }
}
