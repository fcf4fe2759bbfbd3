/// The tables of the device sets: a cache of the names rollup (``RollupTables``) that counts
/// distinct devices without reading one row per hour, name and device.
///
/// Each device of an app gets a number once (`device_numbers`). For each hour that has been built
/// (`device_set_hours`), `rollup_name_sets` holds a row per name and (platform, app version, OS
/// version): the events, and the set of the numbers of the devices that sent them
/// (``DeviceSetCoding``); `rollup_name_set_totals` the same per name over every platform and
/// version, which reports without a platform or version read. A count over a range is then the size
/// of the union of the range's sets (at 10M events, 6,720 totals or 39,301 sets instead of
/// 4,095,000 rollup rows; Docs/Benchmarks.md).
///
/// The names rollup stays the truth: sets are built for hours the app has stopped writing to
/// (``DeviceSetKeeping/buildDeviceSets(before:)``), and any change to an hour's rollup rows (a
/// late or resent event, an erasure, pruning, a rebuild) deletes that hour's sets and its mark in
/// the same transaction (``DeviceSetSQL/invalidate(hoursOf:where:hour:)``). A report reads the
/// sets of the marked hours and the rollup rows of the others, so it is exact whatever is built.
public struct DeviceSetTables: Sendable, Hashable {
  /// The sets' qualified name.
  public var sets: String
  /// The qualified name of the sets per hour and name only (every platform and version).
  public var totals: String
  /// The built hours' qualified name.
  public var hours: String
  /// The device numbers' qualified name.
  public var numbers: String
  /// The funnel's step events of the built hours (``StepCacheBuild``), qualified.
  public var steps: String
  /// The events by parameter value of the built hours (``ParameterCacheBuild``), qualified.
  public var parameters: String

  /// The tables `rollup_name_sets`, `rollup_name_set_totals`, `device_set_hours`,
  /// `device_numbers`, `rollup_step_events` and `rollup_parameter_values`, each behind `prefix` (a
  /// schema and a dot, or nothing).
  public init(prefix: String) {
    sets = prefix + "rollup_name_sets"
    totals = prefix + "rollup_name_set_totals"
    hours = prefix + "device_set_hours"
    numbers = prefix + "device_numbers"
    steps = prefix + "rollup_step_events"
    parameters = prefix + "rollup_parameter_values"
  }
}

/// The SQL of the device sets (``DeviceSetTables``) beside the names rollup `names`.
public struct DeviceSetSQL: Sendable {
  /// The tables.
  public let tables: DeviceSetTables
  /// The names rollup they cache.
  public let names: String

  /// The SQL of the sets behind `prefix` (a schema and a dot, or nothing), caching the names
  /// rollup behind the same prefix.
  public init(prefix: String) {
    tables = DeviceSetTables(prefix: prefix)
    names = RollupTables(prefix: prefix).names
  }

  /// `CREATE TABLE` and `CREATE INDEX` statements, the set of type `blob` (`BLOB`, `bytea`).
  public func create(blob: String) -> [String] {
    [
      """
      CREATE TABLE \(tables.numbers) (
        app TEXT NOT NULL, device_id TEXT NOT NULL, num BIGINT NOT NULL, PRIMARY KEY (app, device_id)
      )
      """,
      "CREATE UNIQUE INDEX device_numbers_by_number ON \(tables.numbers) (app, num)",
      "CREATE TABLE \(tables.hours) (app TEXT NOT NULL, hour BIGINT NOT NULL, PRIMARY KEY (app, hour))",
      """
      CREATE TABLE \(tables.sets) (
        app TEXT NOT NULL, hour BIGINT NOT NULL, name TEXT NOT NULL, platform TEXT NOT NULL,
        app_version TEXT NOT NULL, os_version TEXT NOT NULL, events BIGINT NOT NULL, devices \(blob) NOT NULL,
        PRIMARY KEY (app, hour, name, platform, app_version, os_version)
      )
      """,
    ]
  }

  /// The `CREATE TABLE` of the totals (``DeviceSetTables/totals``), the set of type `blob`, and the
  /// deletion of every mark and set: built again, each hour gets its totals.
  public func createTotals(blob: String) -> [String] {
    [
      """
      CREATE TABLE \(tables.totals) (
        app TEXT NOT NULL, hour BIGINT NOT NULL, name TEXT NOT NULL, events BIGINT NOT NULL, devices \(blob) NOT NULL,
        PRIMARY KEY (app, hour, name)
      )
      """
    ] + [tables.hours, tables.sets].map { "DELETE FROM \($0)" }
  }

  /// Per app, its first and last rollup hour (`app`, `first`, `last`): the apps by a loose index
  /// scan of the rollup's key (one seek per app), each app's hours by two more, never a scan of
  /// its rows (the job asks every ten minutes; 0.4–0.9 s at 10M events by `GROUP BY`).
  public var appHours: String {
    """
    WITH RECURSIVE apps(app) AS (
      SELECT min(app) FROM \(names)
      UNION ALL SELECT (SELECT min(app) FROM \(names) r WHERE r.app > apps.app) FROM apps WHERE apps.app IS NOT NULL
    )
    SELECT app, (SELECT min(hour) FROM \(names) r WHERE r.app = apps.app) AS first,
      (SELECT max(hour) FROM \(names) r WHERE r.app = apps.app) AS last
    FROM apps WHERE app IS NOT NULL
    """
  }

  /// Numbers the devices of the names rollup's rows of app `1`, hours `[2, 3)` that have none, from
  /// `4` up, in the order of their ids (`placeholder` writes the numbered placeholders).
  public func numberDevices(placeholder: (Int) -> String) -> String {
    let (app, from, to, next) = (placeholder(1), placeholder(2), placeholder(3), placeholder(4))
    return """
      INSERT INTO \(tables.numbers) (app, device_id, num)
      SELECT \(app), device_id, \(next) + row_number() OVER (ORDER BY device_id) - 1 FROM (
        SELECT DISTINCT device_id FROM \(names) r WHERE app = \(app) AND hour >= \(from) AND hour < \(to)
          AND NOT EXISTS (SELECT 1 FROM \(tables.numbers) n WHERE n.app = \(app) AND n.device_id = r.device_id)) AS d
      """
  }

  /// The most hours one build transaction builds: writes to the names rollup wait for it, and a day
  /// of a store of 10M events held them 4–8 s (its events read again for the step and parameter
  /// caches); six hours hold them a quarter of that for the same total (Docs/Benchmarks.md).
  public static let hoursPerBuild: Int64 = 6

  /// Per app, the runs of hours (``hoursPerBuild`` at most each) from its `first` rollup hour to its
  /// `last`, ending at or before `before`, that are not in `marked`. Hours without rows are
  /// included: their mark says there is nothing to count.
  public static func unbuilt(first: Int64, last: Int64, before: Int64, marked: Set<Int64>) -> [Range<Int64>] {
    let length = RollupTables.hour
    let end = min(before / length * length, last + length)
    guard first < end else { return [] }
    var pieces: [Range<Int64>] = []
    var start: Int64?
    for hour in stride(from: first, through: end, by: Int(length)) {
      let open = hour < end && !marked.contains(hour)
      if open, start == nil { start = hour }
      if let from = start, !open || hour - from == hoursPerBuild * length {
        pieces.append(from..<hour)
        start = open ? hour : nil
      }
    }
    return pieces
  }

  /// Deletes the sets and the marks of every (app, hour) of the rows of `source` matching
  /// `condition`, `hour` being the expression of a row's hour (`hour` in a rollup).
  public func invalidate(hoursOf source: String, where condition: String, hour: String) -> [String] {
    let touched = "(SELECT DISTINCT app, \(hour) FROM \(source) WHERE \(condition))"
    return built.map { "DELETE FROM \($0) WHERE (app, hour) IN \(touched)" }
  }

  /// Whether any (app, hour) of the rows of `source` matching `condition` is built (`touched`: 1
  /// or 0): only then has ``invalidate(hoursOf:where:hour:)`` anything to delete, as a build writes
  /// every table of ``built`` for the hours it marks and an invalidation deletes them together.
  public func touchesBuilt(hoursOf source: String, where condition: String, hour: String) -> String {
    "SELECT EXISTS (SELECT 1 FROM \(tables.hours) WHERE (app, hour) IN "
      + "(SELECT DISTINCT app, \(hour) FROM \(source) WHERE \(condition))) AS touched"
  }

  /// Deletes every set and mark (before the rollups are rebuilt from all events).
  public var clear: [String] {
    built.map { "DELETE FROM \($0)" }
  }

  /// The tables a build writes, keyed by app and hour.
  public var built: [String] { [tables.hours, tables.sets, tables.totals, tables.steps, tables.parameters] }
}

/// A set of device numbers as bytes: the numbers in ascending order, each four bytes,
/// least significant first.
public enum DeviceSetCoding {
  /// The bytes of `numbers` (sorted here; duplicates kept once).
  public static func encode(_ numbers: [UInt32]) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(numbers.count * 4)
    var last: UInt32?
    for number in numbers.sorted() where number != last {
      withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
      last = number
    }
    return bytes
  }

  /// `number` as a set holds it; a store error past 2^32 devices in one app.
  public static func number(_ number: Int64, app: String) throws -> UInt32 {
    guard let value = UInt32(exactly: number) else {
      throw StoreError.unavailable("app \(app) has more devices than a device set numbers (2^32)")
    }
    return value
  }

  /// The numbers `bytes` hold, appended to `numbers` (a trailing partial number is ignored).
  public static func decode(_ bytes: UnsafeRawBufferPointer, into numbers: inout [UInt32]) {
    let count = bytes.count / 4
    numbers.reserveCapacity(numbers.count + count)
    for index in 0..<count {
      numbers.append(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
    }
  }
}

/// One row of a device-set query: its columns, and the devices of its `devices` column.
public struct DeviceSetRow: Sendable, Hashable {
  /// The row's other columns.
  public var row: SQLRow
  /// The device numbers of the set.
  public var devices: [UInt32]

  /// A row and its set.
  public init(row: SQLRow, devices: [UInt32]) {
    self.row = row
    self.devices = devices
  }
}

/// A store that keeps device sets (``DeviceSetTables``) and can build them.
public protocol DeviceSetKeeping: Sendable {
  /// Builds the sets of every hour ending at or before `before` (ms since 1970) that has none;
  /// returns the number of hours built. The collector calls it now and then for the hours two
  /// hours past; tools after a bulk load, with `Int64.max`.
  @discardableResult func buildDeviceSets(before: Int64) async throws -> Int
}
