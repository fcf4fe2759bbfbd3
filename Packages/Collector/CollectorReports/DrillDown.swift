package import CollectorStore
public import CollectorWire

/// The people or devices behind a number (a funnel step's drop-off, a retention cell): how many,
/// and the first of them by id.
public struct UnitList: ReportResult, Hashable {
  /// `count` people or devices (`unit`), `units` the first of them by id.
  public init(unit: ReportUnit, count: Int64, units: [String]) {
    self.unit = unit
    self.count = count
    self.units = units
  }

  /// What is listed: people or devices.
  public var unit: ReportUnit
  /// How many there are.
  public var count: Int64
  /// The first of them, by id. A device is its id. A person is `u:` and their user id, or `d:` and
  /// the id of a device never identified; in an app where no one is identified, people are devices
  /// and named by the device's id.
  public var units: [String]

  /// The most units a list holds.
  public static let mostUnits = 1_000

  public var table: ReportTable {
    ReportTable(columns: [unit.title], rows: units.map { [$0] })
  }

  /// Where a listed unit's own events are: a device (`device`) or a user (`user`), and its id.
  public func profile(of unit: String) -> (field: String, id: String) {
    guard self.unit == .person else { return ("device", unit) }
    if unit.hasPrefix("u:") { return ("user", String(unit.dropFirst(2))) }
    if unit.hasPrefix("d:") { return ("device", String(unit.dropFirst(2))) }
    return ("device", unit)
  }

  /// The list from rows of `unit_id`, sorted by it, and their count.
  package init(_ found: [SQLRow], count: Int64, unit: ReportUnit) {
    self.init(unit: unit, count: count, units: found.map { $0["unit_id"].text ?? "" })
  }
}

/// How people or devices went through a funnel: the time each step took, and who dropped off where.
public struct FunnelPaths: ReportResult, Hashable {
  /// How many reached each step, median times to each and the units dropped at `dropped`'s step.
  public init(steps: [String], unit: ReportUnit, reached: [Int64], medianTimes: [Int64?], dropped: UnitList?) {
    self.steps = steps
    self.unit = unit
    self.reached = reached
    self.medianTimes = medianTimes
    self.dropped = dropped
  }

  /// The steps' event names, in order.
  public var steps: [String]
  /// What went through: people or devices.
  public var unit: ReportUnit
  /// For each step, the people or devices that reached it (the funnel's ``Funnel/Step/devices``).
  public var reached: [Int64]
  /// For each step, the median over the units that reached it of their quickest time from a first
  /// step to it, in milliseconds (0 for the first step; `nil` when no one reached it).
  public var medianTimes: [Int64?]
  /// The units that reached the step before the one asked for and not it; `nil` when none was asked.
  public var dropped: UnitList?

  /// Each step's people or devices and median time (the dropped units are ``UnitList``'s table).
  public var table: ReportTable {
    ReportTable(
      columns: ["step", unit.plural, "median ms from step 1"],
      rows: steps.indices.map { index in
        [steps[index], "\(reached[index])", medianTimes[index].map(String.init) ?? ""]
      })
  }

  /// The most step events a walk reads: a funnel with more, in its range, is refused.
  public static let mostEvents = 2_000_000

  /// The refusal of a funnel with more than ``mostEvents`` step events in its range.
  public static let tooManyEvents = FieldError(
    field: "from", reason: "the steps have more than \(mostEvents) events in the range: narrow it")

  /// The paths from step events grouped by unit, each unit's by time and event id; the units that
  /// dropped at step `droppedAt` (1 or later), `limit` of them at most.
  package init(
    _ found: [FunnelEvent], steps: [String], window: Int64, droppedAt: Int?, limit: Int, unit: ReportUnit
  ) {
    var times = Array(repeating: [Int64](), count: steps.count)
    var reached = Array(repeating: Int64(0), count: steps.count)
    var dropped: [String] = []
    var droppedCount: Int64 = 0
    Funnel.eachUnit(found) { key, events in
      let path = Funnel.walk(events, steps: steps, window: window, timed: true)
      for step in 0..<path.best {
        times[step].append(path.fastest[step] ?? 0)
        reached[step] += 1
      }
      if let droppedAt, path.best == droppedAt {
        droppedCount += 1
        dropped.append(key)
      }
    }
    let listed = Array(dropped.sorted().prefix(max(0, limit)))
    self.init(
      steps: steps, unit: unit, reached: reached, medianTimes: times.map(Self.median),
      dropped: droppedAt.map { _ in UnitList(unit: unit, count: droppedCount, units: listed) })
  }

  /// The median of `values` (the lower of the two middle ones), `nil` for none.
  static func median(_ values: [Int64]) -> Int64? {
    guard !values.isEmpty else { return nil }
    return values.sorted()[(values.count - 1) / 2]
  }
}

extension ReportEngine {
  /// How `steps` were gone through (``FunnelPaths``): the median time to each step and, when
  /// `droppedAt` names a step (1 is the second), the units that reached the step before and not it,
  /// `limit` at most. The funnel's step events are walked by the collector, so a range with more
  /// than ``FunnelPaths/mostEvents`` of them is refused (``FieldError`` on `from`).
  public func funnelPaths(
    _ filter: ReportFilter, steps: [String], window: Int64, droppedAt: Int?, limit: Int = 100
  ) async throws -> FunnelPaths {
    let filter = try Funnel.filter(filter, steps: steps, window: window, appVersion: nil)
    if let droppedAt, !(1..<steps.count).contains(droppedAt) {
      throw FieldError(field: "dropped", reason: "a step from 2 to \(steps.count)")
    }
    let found = try await funnelEvents(filter, steps: steps, limit: FunnelPaths.mostEvents)
    guard found.count <= FunnelPaths.mostEvents else { throw FunnelPaths.tooManyEvents }
    return FunnelPaths(
      found, steps: steps, window: window, droppedAt: droppedAt, limit: min(limit, UnitList.mostUnits),
      unit: filter.unit)
  }

  /// The people or devices (``ReportFilter/unit``) of the retention cohort starting at `cohort`
  /// (its ``Retention/Cohort/start``) active `offset` periods later, `limit` at most.
  public func retainedUnits(
    _ filter: ReportFilter, period: ReportBucket, events: RetentionEvents = .any, cohort: Int64, offset: Int,
    limit: Int = 100
  ) async throws -> UnitList {
    try Retention.check(filter, period: period, events: events)
    let index = try Retention.index(of: cohort, filter: filter, period: period)
    guard offset >= 0 else { throw FieldError(field: "offset", reason: "must be 0 or more") }
    return try await retentionUnits(
      filter, period: period, events: events, cohort: index, offset: Int64(offset),
      limit: min(max(1, limit), UnitList.mostUnits))
  }
}

extension Retention {
  /// The index from the range's start of the period starting at `start` (a cohort's start).
  package static func index(of start: Int64, filter: ReportFilter, period: ReportBucket) throws(FieldError) -> Int64 {
    let offset = filter.zone.local(start) - filter.zone.local(filter.from)
    guard start >= filter.from, start < filter.to, offset % period.milliseconds == 0 else {
      throw FieldError(field: "cohort", reason: "is the first day of a \(period.rawValue) in the range")
    }
    return offset / period.milliseconds
  }
}
