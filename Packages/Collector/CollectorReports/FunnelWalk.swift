package import CollectorStore
import Foundation

/// One step event of a funnel, as the collector's walk reads it: its person or device (as
/// ``UnitList/units`` names it), its name (one of the steps) and its time in ms since 1970.
public typealias FunnelEvent = (unit: String, name: String, time: Int64)

/// The funnel walked by the collector, from each unit's step events in order: the SQL engines'
/// funnel, ClickHouse's (``PackedFunnelWalk``, the same walk), the drill-down's paths on every
/// engine, and the units ClickHouse's packed events cannot order (ties in one millisecond).
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
      while end < found.count, found[end].unit.hasSameBytes(as: unit) { end += 1 }
      body(unit, found[index..<end])
      index = end
    }
  }

  /// Step events in any order, grouped by unit, each unit's ordered by time and event id (events of
  /// one millisecond keep their tracking order: CoreTracker's ids grow with each event). With
  /// `persons` (device to person) a unit is `u:` and the device's person, or `d:` and a device
  /// never identified; without, the device.
  package static func byUnit(_ found: StepEventColumns, persons: [ExactText: String]?) -> [FunnelEvent] {
    let grouped = UnitOrder(found, persons: persons)
    let part = grouped.part(grouped.units.indices, of: found)
    var ordered: [FunnelEvent] = []
    ordered.reserveCapacity(found.count)
    for unit in grouped.units.indices {
      for event in part.events(of: unit) {
        ordered.append((unit: grouped.units[unit], name: found.names[Int(event.name)], time: event.time))
      }
    }
    return ordered
  }

  /// How many people or devices reached each step, from step events in any order (``byUnit(_:persons:)``'s
  /// grouping), walked on the columns' numbers: no ``FunnelEvent`` is made, and each event's name is
  /// matched to its steps once per distinct name rather than by comparing strings per event.
  ///
  /// The units are grouped and walked in `parts` runs at once (``UnitOrder/runs(_:)``): by default
  /// ``parts(events:cores:)`` of this machine's cores. Any number of parts gives the same answer: a
  /// unit's events are all in one part.
  package static func reached(
    _ found: StepEventColumns, persons: [ExactText: String]?, steps: [String], window: Int64, parts: Int? = nil
  ) async -> [Int64] {
    let grouped = UnitOrder(found, persons: persons)
    let steps = StepsOfNames(steps: steps, names: found.names)
    let parts = parts ?? Self.parts(events: found.count, cores: ProcessInfo.processInfo.activeProcessorCount)
    return await withTaskGroup(of: [Int64].self) { group in
      for run in grouped.runs(parts) {
        group.addTask { steps.reached(grouped.part(run, of: found), window: window) }
      }
      var reached = Array(repeating: Int64(0), count: steps.count)
      for await counted in group {
        for step in reached.indices { reached[step] += counted[step] }
      }
      return reached
    }
  }

  /// How many parts a funnel of `events` step events is walked in on `cores` cores: one per core, but
  /// no fewer than ``eventsPerPart`` events a part (a smaller part costs its task more than it saves),
  /// and at least one.
  package static func parts(events: Int, cores: Int) -> Int {
    max(1, min(cores, events / eventsPerPart))
  }

  /// The fewest step events worth a part of their own (``parts(events:cores:)``).
  package static let eventsPerPart = 100_000

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
  /// `latest[k]`: the latest start of a chain that has reached step `k` (``none``: no chain has).
  private var latest: [Int64]
  /// `quickest[k]`: the quickest chain from a first step to step `k` (when timed; `Int64.max`: none).
  private var quickest: [Int64]
  /// How many steps the unit has reached.
  private(set) var best = 0
  private let window: Int64
  private let timed: Bool
  /// No chain: a sentinel, not an optional (an `Int64?` per step cost a tenth of the walk).
  private static let none = Int64.min

  init(steps: Int, window: Int64, timed: Bool) {
    latest = Array(repeating: Self.none, count: steps)
    quickest = Array(repeating: .max, count: timed ? steps : 0)
    (self.window, self.timed) = (window, timed)
  }

  /// `fastest[k]`: the quickest chain from a first step to step `k` (when timed).
  var fastest: [Int64?] { quickest.map { $0 == .max ? nil : $0 } }

  /// The state before a unit's first event, for the next unit (its arrays kept, not made again).
  mutating func reset() {
    for step in 0..<min(best, latest.count) { latest[step] = Self.none }
    for step in 0..<min(best, quickest.count) { quickest[step] = .max }
    best = 0
  }

  /// Takes one event at `time` that is each of the steps `matching` (from the last to the first);
  /// `true` once nothing later can change the answer (every step reached, untimed).
  mutating func advance(_ matching: some Sequence<Int>, at time: Int64) -> Bool {
    let (window, timed) = (window, timed)
    var best = best
    latest.withUnsafeMutableBufferPointer { latest in
      quickest.withUnsafeMutableBufferPointer { quickest in
        Self.take(matching, at: time, window: window, latest: latest, quickest: timed ? quickest : nil, best: &best)
      }
    }
    self.best = best
    return best == latest.count && !timed
  }

  /// Takes packed events in order (`time << bits | name`, ``PackedFunnelWalk``), each the steps
  /// `stepsOf` its name, untimed, until every step is reached: ``advance(_:at:)`` with the state's
  /// arrays opened once for all the unit's events, not once an event.
  mutating func advance(
    packed events: UnsafeMutableBufferPointer<Int64>, bits: Int64, stepsOf: (Int) -> UnsafeBufferPointer<Int>
  ) {
    let (window, mask, steps) = (window, Int64(1) << bits - 1, latest.count)
    var best = best
    latest.withUnsafeMutableBufferPointer { latest in
      for event in events {
        Self.take(
          stepsOf(Int(event & mask)), at: event >> bits, window: window, latest: latest, quickest: nil, best: &best)
        if best == steps { break }
      }
    }
    self.best = best
  }

  /// The walk's one step: an event at `time` that is each of the steps `matching`, from the last.
  @inline(__always)
  private static func take(
    _ matching: some Sequence<Int>, at time: Int64, window: Int64, latest: UnsafeMutableBufferPointer<Int64>,
    quickest: UnsafeMutableBufferPointer<Int64>?, best: inout Int
  ) {
    for step in matching {
      // No chain has reached the step before one past `best`: a 20-step funnel that names a step
      // nine times looks at the few a unit can take, not at nine.
      if step > best { continue }
      if step == 0 {
        latest[0] = time
        best = max(best, 1)
        quickest?[0] = 0
        continue
      }
      let start = latest[step - 1]
      guard start != none, time - start <= window else { continue }
      latest[step] = max(latest[step], start)
      best = max(best, step + 1)
      if let quickest { quickest[step] = min(quickest[step], time - start) }
    }
  }
}

/// Each name's steps, the last first, in one array: name `n`'s are `matching[bounds[n]..<bounds[n + 1]]`
/// (an array per name cost a retain and a release per event: a tenth of a 20-step funnel).
struct StepsOfNames: Sendable {
  /// How many steps the funnel has.
  let count: Int
  private var matching: [Int] = []
  private var bounds = [0]

  /// The steps of each of `names` (the columns' distinct names).
  init(steps: [String], names: [String]) {
    count = steps.count
    for name in names {
      matching += steps.indices.reversed().filter { steps[$0] == name }
      bounds.append(matching.count)
    }
  }

  /// Name `name`'s steps, the last first (valid inside `body`).
  func withSteps<Result>(_ body: (_ of: (Int) -> UnsafeBufferPointer<Int>) -> Result) -> Result {
    matching.withUnsafeBufferPointer { matching in
      body { name in UnsafeBufferPointer(rebasing: matching[bounds[name]..<bounds[name + 1]]) }
    }
  }

  /// How many of `part`'s units reached each step.
  func reached(_ part: UnitOrder.Part, window: Int64) -> [Int64] {
    var reached = Array(repeating: Int64(0), count: count)
    var walker = FunnelWalker(steps: count, window: window, timed: false)
    withSteps { stepsOf in
      for unit in part.units {
        walker.reset()
        for event in part.events(of: unit) where walker.advance(stepsOf(Int(event.name)), at: event.time) { break }
        for step in 0..<walker.best { reached[step] += 1 }
      }
    }
    return reached
  }
}
