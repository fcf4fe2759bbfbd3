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
    let grouped = UnitOrder(found, persons: persons)
    var ordered: [FunnelEvent] = []
    ordered.reserveCapacity(found.count)
    for unit in grouped.units.indices {
      for event in grouped.events(of: unit) {
        ordered.append((unit: grouped.units[unit], name: found.names[Int(found.name[event])], time: found.time[event]))
      }
    }
    return ordered
  }

  /// How many people or devices reached each step, from step events in any order (``byUnit(_:persons:)``'s
  /// grouping), walked on the columns' numbers: no ``FunnelEvent`` is made, and each event's name is
  /// matched to its steps once per distinct name rather than by comparing strings per event.
  package static func reached(
    _ found: StepEventColumns, persons: [String: String]?, steps: [String], window: Int64
  ) -> [Int64] {
    let grouped = UnitOrder(found, persons: persons)
    let matching = found.names.map { name in steps.indices.reversed().filter { steps[$0] == name } }
    var reached = Array(repeating: Int64(0), count: steps.count)
    for unit in grouped.units.indices {
      var walker = FunnelWalker(steps: steps.count, window: window, timed: false)
      for event in grouped.events(of: unit)
      where walker.advance(matching[Int(found.name[event])], at: found.time[event]) {
        break
      }
      for step in 0..<walker.best { reached[step] += 1 }
    }
    return reached
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
    var walker = FunnelWalker(steps: steps.count, window: window, timed: timed)
    for event in events
    where walker.advance(steps.indices.reversed().lazy.filter { steps[$0] == event.name }, at: event.time) {
      break
    }
    return (walker.best, walker.fastest)
  }
}

/// ``Funnel/walk(_:steps:window:timed:)``'s state over one unit's events in order.
struct FunnelWalker {
  /// `latest[k]`: the latest start of a chain that has reached step `k`.
  private var latest: [Int64?]
  /// `fastest[k]`: the quickest chain from a first step to step `k` (when timed).
  private(set) var fastest: [Int64?]
  /// How many steps the unit has reached.
  private(set) var best = 0
  private let window: Int64
  private let timed: Bool

  init(steps: Int, window: Int64, timed: Bool) {
    latest = Array(repeating: nil, count: steps)
    fastest = Array(repeating: nil, count: timed ? steps : 0)
    (self.window, self.timed) = (window, timed)
  }

  /// Takes one event at `time` that is each of the steps `matching` (from the last to the first);
  /// `true` once nothing later can change the answer (every step reached, untimed).
  mutating func advance(_ matching: some Sequence<Int>, at time: Int64) -> Bool {
    for step in matching {
      if step == 0 {
        latest[0] = time
        best = max(best, 1)
        if timed { fastest[0] = 0 }
        continue
      }
      guard let start = latest[step - 1], time - start <= window else { continue }
      latest[step] = max(latest[step] ?? start, start)
      best = max(best, step + 1)
      if timed { fastest[step] = min(fastest[step] ?? .max, time - start) }
    }
    return best == latest.count && !timed
  }
}

/// Step events grouped by unit (a counting sort; units in the order first met, as nothing needs
/// them in the units' order: sorting the ids cost a quarter of the grouping), each unit's by time
/// and id. With persons (device to person) a unit is `u:` and the device's person, or `d:` and a
/// device never identified; without, the device.
struct UnitOrder {
  /// The units, each once.
  private(set) var units: [String] = []
  /// Where each unit's events start in ``order`` (and, one on, end).
  private var starts: [Int]
  /// The events' indices, unit by unit.
  private var order: [Int]

  init(_ found: StepEventColumns, persons: [String: String]?) {
    // Each device's unit, looked up once per device.
    var unitNamed: [String: Int] = [:]
    var units: [String] = []
    let unitOfDevice = found.devices.map { device in
      let named = unitID(of: device, persons: persons)
      if let known = unitNamed[named] { return known }
      units.append(named)
      unitNamed[named] = units.count - 1
      return units.count - 1
    }
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
    for unit in units.indices {
      order[starts[unit]..<starts[unit + 1]].sort { one, other in
        times[one] != times[other] ? times[one] < times[other] : found.idPrecedes(one, other)
      }
    }
    (self.units, self.starts, self.order) = (units, starts, order)
  }

  /// Unit `unit`'s events, in order.
  func events(of unit: Int) -> ArraySlice<Int> { order[starts[unit]..<starts[unit + 1]] }
}
