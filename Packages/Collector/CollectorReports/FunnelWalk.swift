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

  /// Rows of (`device_id`, `name`, `t`, `event_id`) in any order as step events grouped by unit,
  /// each unit's ordered by time and event id (events of one millisecond keep their tracking
  /// order: CoreTracker's ids grow with each event). With `persons` (device to person) a unit is
  /// `u:` and the device's person, or `d:` and a device never identified; without, the device.
  package static func byUnit(_ found: [SQLRow], persons: [String: String]?) -> [FunnelEvent] {
    guard let columns = found.first?.columns else { return [] }
    let read = StepRows(found, columns: columns, persons: persons)
    let (units, times) = (read.units, read.times)
    // The events grouped by unit, units in the order first met (a counting sort; nothing needs
    // them in the units' order: sorting the ids cost a quarter of this function), then each unit's
    // by time and id.
    var starts = Array(repeating: 0, count: units.count + 1)
    for unit in read.unitOfEvent { starts[unit + 1] += 1 }
    for index in units.indices { starts[index + 1] += starts[index] }
    var order = Array(repeating: 0, count: found.count)
    var next = starts
    for (event, unit) in read.unitOfEvent.enumerated() {
      order[next[unit]] = event
      next[unit] += 1
    }
    var ordered: [FunnelEvent] = []
    ordered.reserveCapacity(found.count)
    for unit in units.indices {
      order[starts[unit]..<starts[unit + 1]].sort { one, other in
        times[one] != times[other] ? times[one] < times[other] : read.id(found[one]) < read.id(found[other])
      }
      for event in order[starts[unit]..<starts[unit + 1]] {
        ordered.append((unit: units[unit], name: read.names[read.nameOfEvent[event]], time: times[event]))
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

/// Step-event rows read once, in order, into arrays: each event's unit (looked up once per
/// device), name (one of the few step names) and time; the sort and the walk then read these
/// instead of the rows.
private struct StepRows {
  var units: [String] = []
  var names: [String] = []
  var unitOfEvent: [Int] = []
  var nameOfEvent: [Int] = []
  var times: [Int64] = []
  let idColumn: Int

  init(_ found: [SQLRow], columns: [String], persons: [String: String]?) {
    func position(_ name: String) -> Int { columns.firstIndex(of: name) ?? columns.count }
    let (device, name, time) = (position("device_id"), position("name"), position("t"))
    idColumn = position("event_id")
    var unitOfDevice: [String: Int] = [:]
    var unitNamed: [String: Int] = [:]
    unitOfEvent.reserveCapacity(found.count)
    nameOfEvent.reserveCapacity(found.count)
    times.reserveCapacity(found.count)
    for row in found {
      let key = Self.text(row, device)
      let unit: Int
      if let known = unitOfDevice[key] {
        unit = known
      } else {
        let named = persons.map { persons in persons[key].map { "u:" + $0 } ?? "d:" + key } ?? key
        unit = unitNamed[named] ?? units.count
        if unit == units.count {
          units.append(named)
          unitNamed[named] = unit
        }
        unitOfDevice[key] = unit
      }
      let step = Self.text(row, name)
      let named = names.firstIndex(of: step) ?? names.count
      if named == names.count { names.append(step) }
      unitOfEvent.append(unit)
      nameOfEvent.append(named)
      times.append(time < row.values.count ? row.values[time].int ?? 0 : 0)
    }
  }

  /// The event id of `row`, which orders events of one millisecond.
  func id(_ row: SQLRow) -> String { Self.text(row, idColumn) }

  private static func text(_ row: SQLRow, _ index: Int) -> String {
    index < row.values.count ? row.values[index].text ?? "" : ""
  }
}
