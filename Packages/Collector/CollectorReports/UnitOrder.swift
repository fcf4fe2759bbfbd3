import CollectorStore

/// Step events grouped by unit (a counting sort; units in the order first met, as nothing needs
/// them in the units' order: sorting the ids cost a quarter of the grouping), each unit's by time
/// and id. With persons (device to person) a unit is `u:` and the device's person, or `d:` and a
/// device never identified; without, the device.
///
/// The grouping is made in parts (``part(_:of:)``), each a run of units (``runs(_:)``) with its own
/// memory, so that parts are grouped, sorted and walked at once, one per core: a funnel's walk of
/// millions of step events is the collector's own work, and one core did it while the others
/// waited.
///
/// Each unit's events are kept side by side with their times and names (``Entry``), not as indices
/// into the columns: the walk then reads memory in order. Reading the columns at each unit's event
/// indices missed the CPU's caches on nearly every event (90% of a 20-step funnel's walk at 10M).
struct UnitOrder: Sendable {
  /// One event: its time, its name (an index into the columns' names) and its index in the columns
  /// (16 bytes: 32 bits hold the index of every event columns can hold in memory, at 28 bytes each).
  struct Entry: Sendable {
    var time: Int64
    var name: Int32
    var event: UInt32
  }

  /// The events of a run of units, each unit's side by side and in order.
  struct Part: Sendable {
    /// The units, as indices into ``UnitOrder/units``.
    let units: Range<Int>
    /// Where each unit's events start in ``entries`` (and, one on, end), from the run's first unit.
    fileprivate let starts: [Int]
    /// The events, unit by unit.
    fileprivate(set) var entries: [Entry]

    /// Unit `unit`'s events (an index into ``UnitOrder/units``, in ``units``), in order.
    func events(of unit: Int) -> ArraySlice<Entry> {
      entries[starts[unit - units.lowerBound]..<starts[unit - units.lowerBound + 1]]
    }
  }

  /// The units, each once.
  let units: [String]
  /// Each device's unit, an index into ``units``, by the device's index in the columns.
  private let unitOfDevice: [Int32]
  /// Where each unit's events start among all the events grouped (and, one on, end).
  private let starts: [Int]

  init(_ found: StepEventColumns, persons: [ExactText: String]?) {
    // Each device's unit, looked up once per device.
    var unitNamed: [ExactText: Int32] = [:]
    var units: [String] = []
    unitOfDevice = found.devices.map { device in
      let named = unitID(of: device, persons: persons)
      if let known = unitNamed[ExactText(named)] { return known }
      units.append(named)
      unitNamed[ExactText(named)] = Int32(units.count - 1)
      return Int32(units.count - 1)
    }
    var starts = Array(repeating: 0, count: units.count + 1)
    for device in found.device { starts[Int(unitOfDevice[Int(device)]) + 1] += 1 }
    for index in units.indices { starts[index + 1] += starts[index] }
    (self.units, self.starts) = (units, starts)
  }

  /// The units in at most `count` runs, in order, of about as many events each (none empty).
  func runs(_ count: Int) -> [Range<Int>] {
    let total = starts[units.count]
    var runs: [Range<Int>] = []
    var lower = 0
    for run in 1..<max(1, count) {
      var upper = lower
      while upper < units.count, starts[upper] < total * run / count { upper += 1 }
      if upper > lower { (runs, lower) = (runs + [lower..<upper], upper) }
    }
    return lower < units.count ? runs + [lower..<units.count] : runs
  }

  /// The events of the units `run`, grouped and each unit's sorted by time and id (events of one
  /// millisecond keep their tracking order: CoreTracker's ids grow with each event).
  func part(_ run: Range<Int>, of found: StepEventColumns) -> Part {
    let base = starts[run.lowerBound]
    let offsets = starts[run.lowerBound...run.upperBound].map { $0 - base }
    var entries = [Entry](repeating: Entry(time: 0, name: 0, event: 0), count: offsets[run.count])
    var next = offsets
    let (times, names) = (found.time, found.name)
    for (event, device) in found.device.enumerated() {
      let unit = Int(unitOfDevice[Int(device)])
      guard run.contains(unit) else { continue }
      let slot = unit - run.lowerBound
      entries[next[slot]] = Entry(time: times[event], name: names[event], event: UInt32(truncatingIfNeeded: event))
      next[slot] += 1
    }
    found.withIDOrder { ids in
      for slot in 0..<run.count {
        entries[offsets[slot]..<offsets[slot + 1]].sort { one, other in
          one.time != other.time ? one.time < other.time : ids.precedes(Int(one.event), Int(other.event))
        }
      }
    }
    return Part(units: run, starts: offsets, entries: entries)
  }
}
