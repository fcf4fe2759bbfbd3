/// The funnel's walk (``Funnel/walk(_:steps:window:timed:)``) over units whose step events come
/// packed, one integer each: `time << nameBits | name`, the time in ms from the range's start and the
/// name as its place in ``names``. A store that groups each unit's step events itself (ClickHouse)
/// sends them this way, 8 bytes an event, and the collector walks each unit as it arrives.
///
/// Events of one millisecond are ordered by their id (tracking order), which a packed event does not
/// carry: a unit with two events of different names in one millisecond is not walked here
/// (``walk(_:)`` says so) but from its rows. Two of one name are the same to the walk in any order.
///
/// ```swift
/// var walk = PackedFunnelWalk(steps: ["view", "cart"], window: 60_000)
/// let view = Int64(walk.names.firstIndex(of: "view")!), cart = Int64(walk.names.firstIndex(of: "cart")!)
/// var events: [Int64] = [10_000 << PackedFunnelWalk.nameBits | cart, 0 << PackedFunnelWalk.nameBits | view]
/// events.withUnsafeMutableBufferPointer { walk.walk($0) }  // true
/// walk.reached  // [1, 1]
/// ```
package struct PackedFunnelWalk: Sendable {
  /// The bits of a packed event that hold its name: room for ``Funnel/mostSteps`` names after the
  /// unused place 0.
  package static let nameBits = Int64.bitWidth - Funnel.mostSteps.leadingZeroBitCount

  /// The funnel's distinct names, sorted; place 0 is no name (ClickHouse's `indexOf` counts from 1
  /// and answers 0 for none), so a name's place is its index here.
  package let names: [String]
  /// How many units walked here reached each step.
  package private(set) var reached: [Int64]
  private let steps: StepsOfNames
  private var walker: FunnelWalker

  /// The walk of the funnel `steps` within `window` ms.
  package init(steps: [String], window: Int64) {
    names = [""] + Set(steps).sorted()
    reached = Array(repeating: 0, count: steps.count)
    self.steps = StepsOfNames(steps: steps, names: names)
    walker = FunnelWalker(steps: steps.count, window: window, timed: false)
  }

  /// Walks one unit's packed events (sorted here, in place, unless `sorted` says they are) and counts
  /// the steps it reached; `false`, counting nothing, when two of them of different names share a
  /// millisecond.
  package mutating func walk(_ events: UnsafeMutableBufferPointer<Int64>, sorted: Bool = false) -> Bool {
    var events = events
    if !sorted { events.sort() }
    for index in events.indices.dropFirst() where Self.tied(events[index - 1], events[index]) { return false }
    walker.reset()
    let bits = Self.nameBits
    steps.withSteps { walker.advance(packed: events, bits: Int64(bits), stepsOf: $0) }
    for step in 0..<walker.best { reached[step] += 1 }
    return true
  }

  /// The `runs` of `events` (a unit's rows, each sorted as the server sends one) merged into
  /// `merged`, `scratch` beside it; `false` when a run is not sorted: `merged` then holds the runs
  /// one after another, for ``walk(_:sorted:)`` to sort. Merging a few sorted runs is linear, where
  /// sorting them extended each short run by insertion first (a tenth of a 20-step funnel's walk).
  package static func merge(
    _ runs: [Range<Int>], of events: UnsafeBufferPointer<Int64>, into merged: inout [Int64], scratch: inout [Int64]
  ) -> Bool {
    merged.removeAll(keepingCapacity: true)
    let sorted = runs.allSatisfy { run in run.dropFirst().allSatisfy { events[$0 - 1] <= events[$0] } }
    guard sorted, let first = runs.first else {
      for run in runs { merged.append(contentsOf: events[run]) }
      return sorted
    }
    merged.append(contentsOf: events[first])
    for run in runs.dropFirst() {
      scratch.removeAll(keepingCapacity: true)
      scratch.reserveCapacity(merged.count + run.count)
      merged.withUnsafeBufferPointer { left in
        var (index, other) = (0, run.lowerBound)
        while index < left.count, other < run.upperBound {
          if left[index] <= events[other] {
            scratch.append(left[index])
            index += 1
          } else {
            scratch.append(events[other])
            other += 1
          }
        }
        scratch.append(contentsOf: left[index...])
        scratch.append(contentsOf: events[other..<run.upperBound])
      }
      swap(&merged, &scratch)
    }
    return true
  }

  /// Whether two packed events are of different names in one millisecond (which the walk cannot
  /// order: their ids do).
  package static func tied(_ one: Int64, _ other: Int64) -> Bool {
    one != other && one >> nameBits == other >> nameBits
  }
}
