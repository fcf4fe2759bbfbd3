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

  /// The funnel from step events ordered by unit, time and event id.
  package init(
    _ found: [FunnelEvent], steps: [String], window: Int64, appVersion: String?, unit: ReportUnit
  ) {
    self.init(
      reached: Self.reached(found, steps: steps, window: window), steps: steps, window: window, appVersion: appVersion,
      unit: unit)
  }

  /// How many people or devices reached each step, from step events ordered by unit, time and
  /// event id.
  package static func reached(_ found: [FunnelEvent], steps: [String], window: Int64) -> [Int64] {
    var reached = Array(repeating: Int64(0), count: steps.count)
    eachUnit(found) { _, events in
      for step in 0..<walk(events, steps: steps, window: window).best { reached[step] += 1 }
    }
    return reached
  }

  /// Calls `body` with each unit and its events, from events ordered by unit.
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

  /// Rows of (`device_id`, `name`, `t`, `event_id`) in any order as step events ordered by unit,
  /// time and event id (events of one millisecond keep their tracking order: CoreTracker's ids grow
  /// with each event). With `persons` (device to person) a unit is `u:` and the device's person, or
  /// `d:` and a device never identified; without, the device.
  package static func byUnit(_ found: [SQLRow], persons: [String: String]?) -> [FunnelEvent] {
    guard let columns = found.first?.columns else { return [] }
    func position(_ name: String) -> Int { columns.firstIndex(of: name) ?? columns.count }
    let (device, name, time, id) = (position("device_id"), position("name"), position("t"), position("event_id"))
    func value(_ row: SQLRow, _ index: Int) -> SQLValue { index < row.values.count ? row.values[index] : .null }
    // Each device's unit, looked up once per device; then the units in order, and each event's.
    var unitOfDevice: [String: Int] = [:]
    var unitNamed: [String: Int] = [:]
    var units: [String] = []
    let unitOfEvent = found.map { row -> Int in
      let key = value(row, device).text ?? ""
      if let unit = unitOfDevice[key] { return unit }
      let named = persons.map { persons in persons[key].map { "u:" + $0 } ?? "d:" + key } ?? key
      let unit = unitNamed[named] ?? units.count
      if unit == units.count {
        units.append(named)
        unitNamed[named] = unit
      }
      unitOfDevice[key] = unit
      return unit
    }
    let byRank = units.indices.sorted { units[$0] < units[$1] }
    var rank = Array(repeating: 0, count: units.count)
    for (place, unit) in byRank.enumerated() { rank[unit] = place }
    let times = found.map { value($0, time).int ?? 0 }
    // The events grouped by the units' order (a counting sort), then each unit's by time and id.
    var starts = Array(repeating: 0, count: units.count + 1)
    for unit in unitOfEvent { starts[rank[unit] + 1] += 1 }
    for index in units.indices { starts[index + 1] += starts[index] }
    var order = Array(repeating: 0, count: found.count)
    var next = starts
    for (event, unit) in unitOfEvent.enumerated() {
      order[next[rank[unit]]] = event
      next[rank[unit]] += 1
    }
    var ordered: [FunnelEvent] = []
    ordered.reserveCapacity(found.count)
    for (place, unit) in byRank.enumerated() {
      order[starts[place]..<starts[place + 1]].sort { one, other in
        times[one] != times[other]
          ? times[one] < times[other] : (value(found[one], id).text ?? "") < (value(found[other], id).text ?? "")
      }
      for event in order[starts[place]..<starts[place + 1]] {
        ordered.append((unit: units[unit], name: value(found[event], name).text ?? "", time: times[event]))
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
