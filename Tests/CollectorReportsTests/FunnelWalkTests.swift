import CollectorReports
import TestSupport
import Testing

/// The funnel's one-pass walk (``Funnel/reached(_:steps:window:)``, every engine's) against its
/// definition, written out the slow way: a unit reaches step `k` when some first-step event starts a
/// chain that takes steps 1…k from later events, in order, each event one step, all within the
/// window of that start; the best over every start is the unit's.
@Suite("The funnel's walk is the best of every start")
struct FunnelWalkTests {
  /// The steps one unit's `events` (in order) reach, from every first-step event, each chain taking
  /// the earliest next event of each step (which never reaches fewer steps than any other choice).
  static func bestOfEveryStart(_ events: [FunnelEvent], steps: [String], window: Int64) -> Int {
    var best = 0
    for (start, first) in events.enumerated() where first.name == steps[0] {
      var reached = 1
      for event in events[(start + 1)...] where reached < steps.count {
        guard event.time - first.time <= window else { break }
        if event.name == steps[reached] { reached += 1 }
      }
      best = max(best, reached)
    }
    return best
  }

  /// Seeded random units over four names, with repeats, equal times and long gaps, and funnels of 2
  /// to 20 steps that name steps again (neighbours included).
  @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
  func theWalkEqualsTheBestOfEveryStart(seed: UInt64) {
    var random = SeededRandom(seed: seed)
    let names = ["a", "b", "c", "d"]
    let units = (0..<200).map { unit in
      var time: Int64 = 0
      return (0..<Int.random(in: 0...30, using: &random)).map { _ in
        time += [0, 1, 2, 5, 30][Int.random(in: 0..<5, using: &random)] * 60_000
        return (unit: "u\(unit)", name: names[Int.random(in: 0..<4, using: &random)], time: time)
      }
    }
    for _ in 0..<20 {
      let steps = (0..<Int.random(in: 2...20, using: &random)).map { _ in names[Int.random(in: 0..<4, using: &random)] }
      let window = Int64(Int.random(in: 0...40, using: &random)) * 60_000
      var expected = Array(repeating: Int64(0), count: steps.count)
      for unit in units {
        for step in 0..<Self.bestOfEveryStart(unit, steps: steps, window: window) { expected[step] += 1 }
      }
      #expect(Funnel.reached(units.flatMap { $0 }, steps: steps, window: window) == expected, "\(steps) \(window)")
    }
  }
}
