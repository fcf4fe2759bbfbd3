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
        ordered.append((unit: grouped.units[unit], name: found.names[Int(event.name)], time: event.time))
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
    // Each name's steps, the last first, in one array: name `n`'s are `matching[bounds[n]..<bounds[n + 1]]`
    // (an array per name cost a retain and a release per event: a tenth of a 20-step funnel).
    var matching: [Int] = []
    var bounds = [0]
    for name in found.names {
      matching += steps.indices.reversed().filter { steps[$0] == name }
      bounds.append(matching.count)
    }
    var reached = Array(repeating: Int64(0), count: steps.count)
    var walker = FunnelWalker(steps: steps.count, window: window, timed: false)
    matching.withUnsafeBufferPointer { matching in
      for unit in grouped.units.indices {
        walker.reset()
        for event in grouped.events(of: unit) {
          let name = Int(event.name)
          let steps = UnsafeBufferPointer(rebasing: matching[bounds[name]..<bounds[name + 1]])
          if walker.advance(steps, at: event.time) { break }
        }
        for step in 0..<walker.best { reached[step] += 1 }
      }
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

  /// The state before a unit's first event, for the next unit (its arrays kept, not made again).
  mutating func reset() {
    for step in latest.indices { latest[step] = nil }
    for step in fastest.indices { fastest[step] = nil }
    best = 0
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
///
/// Each unit's events are kept side by side with their times and names (``Entry``), not as indices
/// into the columns: the walk then reads memory in order. Reading the columns at each unit's event
/// indices missed the CPU's caches on nearly every event (90% of a 20-step funnel's walk at 10M).
struct UnitOrder {
  /// One event: its time, its name (an index into the columns' names) and its index in the columns
  /// (16 bytes: 32 bits hold the index of every event columns can hold in memory, at 28 bytes each).
  struct Entry {
    var time: Int64
    var name: Int32
    var event: UInt32
  }

  /// The units, each once.
  private(set) var units: [String] = []
  /// Where each unit's events start in ``entries`` (and, one on, end).
  private var starts: [Int]
  /// The events, unit by unit, each unit's in order.
  private(set) var entries: [Entry]

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
    var entries = [Entry](repeating: Entry(time: 0, name: 0, event: 0), count: found.count)
    var next = starts
    let (times, names) = (found.time, found.name)
    for (event, device) in found.device.enumerated() {
      let unit = unitOfDevice[Int(device)]
      entries[next[unit]] = Entry(time: times[event], name: names[event], event: UInt32(truncatingIfNeeded: event))
      next[unit] += 1
    }
    for unit in units.indices {
      entries[starts[unit]..<starts[unit + 1]].sort { one, other in
        one.time != other.time ? one.time < other.time : found.idPrecedes(Int(one.event), Int(other.event))
      }
    }
    (self.units, self.starts, self.entries) = (units, starts, entries)
  }

  /// Unit `unit`'s events, in order.
  func events(of unit: Int) -> ArraySlice<Entry> { entries[starts[unit]..<starts[unit + 1]] }
}
