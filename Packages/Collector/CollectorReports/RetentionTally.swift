import CollectorStore

/// Retention counted from one row per device, as the SQL stores give it
/// (``SQLReports/retention(_:period:byAppVersion:events:)``): the database groups each device's
/// activity (rows it reads in device order, through the rollups' index by device, so nothing is
/// sorted) and this puts the devices in their units and counts them. Before, the database grouped
/// by device and period, then ranked units with window functions: two sorts of every row, 4× the
/// time at 10M events (`Docs/Benchmarks.md`).
///
/// A device row holds (`retentionDevices`): `d`, the
/// device; `c`, its first period with a start event (`NULL`: none); `t` and `v`, that event's time
/// and app version when split by version (a row per version then); `k` and `b`, a block of
/// ``periodsPerMask`` periods and a bit for each of them the device came back in.
struct RetentionTally {
  /// One unit: its cohort, its first start event's time and version, and the periods it came
  /// back in.
  struct Unit {
    /// The period of its first start event (from the range's start); `nil`: it never started.
    var cohort: Int64?
    /// Its first start event by time, then version.
    var first: (time: Int64, version: String)?
    /// The periods with a return event.
    var back: Set<Int64> = []
  }

  /// The periods one mask holds: bits 0 to 61, a positive 64-bit integer on every engine.
  static let periodsPerMask: Int64 = 62

  /// The units by id.
  private(set) var units: [ExactText: Unit] = [:]

  /// The units of the device rows `found`, a device's unit read from `persons` (``unitID(of:persons:)``).
  init(_ found: [SQLRow], persons: [ExactText: String]?) {
    for row in found {
      let id = ExactText(unitID(of: row["d"].text ?? "", persons: persons))
      var unit = units[id] ?? Unit()
      if let cohort = row["c"].int { unit.cohort = min(unit.cohort ?? cohort, cohort) }
      if let time = row["t"].int {
        let version = row["v"].text ?? ""
        if unit.first.map({ Self.precedes((time, version), $0) }) ?? true { unit.first = (time, version) }
      }
      let base = (row["k"].int ?? 0) * Self.periodsPerMask
      var mask = row["b"].int ?? 0
      while mask > 0 {
        unit.back.insert(base + Int64(mask.trailingZeroBitCount))
        mask &= mask - 1
      }
      units[id] = unit
    }
  }

  /// Whether the start event (`time`, `version`) comes before `other`: by time, then by the
  /// version's bytes, as the databases order text.
  private static func precedes(_ event: (time: Int64, version: String), _ other: (time: Int64, version: String)) -> Bool
  {
    event.time != other.time
      ? event.time < other.time : event.version.precedesInBytes(other.version)
  }

  /// Whether `unit` counts in its cohort's period `offset`: always in its cohort's own (0), and in a
  /// later one when it came back then.
  private static func counts(_ unit: Unit, cohort: Int64, offset: Int64) -> Bool {
    offset == 0 || (offset > 0 && unit.back.contains(cohort + offset))
  }

  /// The cells: units per cohort, version (the first start event's when `byAppVersion`, else
  /// empty) and period from the cohort's.
  func cells(byAppVersion: Bool) -> [Retention.Cell] {
    var counted: [Retention.Cell.Key: Int64] = [:]
    for unit in units.values {
      guard let cohort = unit.cohort else { continue }
      let version = ExactText(byAppVersion ? unit.first?.version ?? "" : "")
      counted[Retention.Cell.Key(cohort: cohort, version: version, offset: 0), default: 0] += 1
      for period in unit.back where period > cohort {
        counted[Retention.Cell.Key(cohort: cohort, version: version, offset: period - cohort), default: 0] += 1
      }
    }
    return counted.map { Retention.Cell(key: $0.key, units: $0.value) }
  }

  /// The ids of the units in cohort `cohort` counted `offset` periods later, in byte order.
  func units(cohort: Int64, offset: Int64) -> [String] {
    units.compactMap { id, unit in
      unit.cohort == cohort && Self.counts(unit, cohort: cohort, offset: offset) ? id.text : nil
    }.sorted { $0.precedesInBytes($1) }
  }
}

/// A device's unit: with `persons` (the app's device-to-person map), `u:` and its person, or `d:`
/// and a device never identified, as ``PersonSQL/units(of:persons:)`` names them in SQL; without,
/// the device. Devices and units are told apart by their bytes (``ExactText``), as SQL groups them.
func unitID(of device: String, persons: [ExactText: String]?) -> String {
  guard let persons else { return device }
  return persons[ExactText(device)].map { "u:" + $0 } ?? "d:" + device
}
