/// The tables of the device sets: a cache of the names rollup (``RollupTables``) that counts
/// distinct devices without reading one row per hour, name and device.
///
/// Each device of an app gets a number once (`device_numbers`). For each hour that has been built
/// (`device_set_hours`), `rollup_name_sets` holds a row per name and (platform, app version, OS
/// version): the events, and the set of the numbers of the devices that sent them
/// (``DeviceSetCoding``). A count over a range is then the size of the union of the range's sets
/// (at 10M events, 6,720 rows instead of 4,095,000; Docs/Benchmarks.md).
///
/// The names rollup stays the truth: sets are built for hours the app has stopped writing to
/// (``DeviceSetKeeping/buildDeviceSets(before:)``), and any change to an hour's rollup rows (a
/// late or resent event, an erasure, pruning, a rebuild) deletes that hour's sets and its mark in
/// the same transaction (``DeviceSetSQL/invalidate(hoursOf:where:hour:)``). A report reads the
/// sets of the marked hours and the rollup rows of the others, so it is exact whatever is built.
public struct DeviceSetTables: Sendable, Hashable {
  /// The sets' qualified name.
  public var sets: String
  /// The built hours' qualified name.
  public var hours: String
  /// The device numbers' qualified name.
  public var numbers: String

  /// The tables `rollup_name_sets`, `device_set_hours` and `device_numbers`, each behind `prefix`
  /// (a schema and a dot, or nothing).
  public init(prefix: String) {
    sets = prefix + "rollup_name_sets"
    hours = prefix + "device_set_hours"
    numbers = prefix + "device_numbers"
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

  /// `CREATE TABLE` and `CREATE INDEX` statements (the set a `BLOB`: SQLite keeps sets; PostgreSQL,
  /// whose type is `bytea`, does not yet).
  public var create: [String] {
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
        app_version TEXT NOT NULL, os_version TEXT NOT NULL, events BIGINT NOT NULL, devices BLOB NOT NULL,
        PRIMARY KEY (app, hour, name, platform, app_version, os_version)
      )
      """,
    ]
  }

  /// Deletes the sets and the marks of every (app, hour) of the rows of `source` matching
  /// `condition`, `hour` being the expression of a row's hour (`hour` in a rollup).
  public func invalidate(hoursOf source: String, where condition: String, hour: String) -> [String] {
    let touched = "(SELECT DISTINCT app, \(hour) FROM \(source) WHERE \(condition))"
    return [tables.hours, tables.sets].map { "DELETE FROM \($0) WHERE (app, hour) IN \(touched)" }
  }

  /// Deletes every set and mark (before the rollups are rebuilt from all events).
  public var clear: [String] {
    [tables.hours, tables.sets].map { "DELETE FROM \($0)" }
  }
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

/// Queries run in one read transaction of a store: each sees the same committed data (a report
/// that reads which hours have sets, then those sets and the other hours' rollup rows, must not
/// see a write or a build land between its reads).
public protocol SnapshotReading {
  /// The rows of one read-only query, as ``ReportQuerying/read(_:_:)`` returns them.
  func read(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]
  /// The rows of one query whose column `devices` is a set of device numbers
  /// (``DeviceSetCoding``): its other columns as ``read(_:_:)`` reads them, the set decoded.
  func readDeviceSets(_ sql: String, _ arguments: [SQLValue]) throws -> [DeviceSetRow]
}

/// A store that keeps device sets (``DeviceSetTables``) and can build them.
public protocol DeviceSetKeeping: Sendable {
  /// Builds the sets of every hour ending at or before `before` (ms since 1970) that has none;
  /// returns the number of hours built. The collector calls it now and then for the hours two
  /// hours past; tools after a bulk load, with `Int64.max`.
  @discardableResult func buildDeviceSets(before: Int64) async throws -> Int
}
