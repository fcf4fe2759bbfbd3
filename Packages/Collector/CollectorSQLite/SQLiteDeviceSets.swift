public import CollectorStore
import Foundation
import GRDB
import GRDBSQLite

extension SQLiteSchema {
  /// The device sets, a cache of the names rollup (``DeviceSetTables``).
  static let deviceSets = DeviceSetSQL(prefix: "")

  /// Deletes the sets of the hours the events a write inserted fall in (their rowids above `?`).
  static let invalidateInserted = deviceSets.invalidate(
    hoursOf: "events", where: "rowid > ?", hour: rollups.hour(of: "occurred_at"))
}

extension SQLiteEventStore: DeviceSetKeeping {
  /// Builds the sets of every app's hours that end at or before `before` and have none, a day of
  /// one app per write transaction (writes go on between them); returns the hours built.
  @discardableResult
  public func buildDeviceSets(before: Int64) async throws -> Int {
    let pieces = try await run { [pool] in
      try pool.read { db in try SQLiteDeviceSets.unbuilt(db, before: before) }
    }
    var built = 0
    for (app, hours) in pieces {
      built += try await run { [pool] in
        try pool.write { db in try SQLiteDeviceSets.build(db, app: app, hours: hours) }
      }
    }
    return built
  }

  /// Runs `body` in one read transaction of one of the WAL readers (its queries see one snapshot).
  public func readSnapshot<T: Sendable>(_ body: @escaping @Sendable (any SnapshotReading) throws -> T)
    async throws -> T
  {
    try await run(on: SQLiteWorker.reports) { [pool] in
      try pool.read { db in try body(SQLiteSnapshot(db: db)) }
    }
  }
}

/// Queries on one read transaction.
struct SQLiteSnapshot: SnapshotReading {
  let db: Database

  func read(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
    try SQLiteRows.read(db, sql: sql, arguments: arguments)
  }

  func readDeviceSets(_ sql: String, _ arguments: [SQLValue]) throws -> [DeviceSetRow] {
    try SQLiteDeviceSets.read(db, sql: sql, arguments: arguments)
  }
}

/// Building and reading the device sets on SQLite.
enum SQLiteDeviceSets {
  private static var tables: DeviceSetTables { SQLiteSchema.deviceSets.tables }
  private static let length = RollupTables.hour

  /// Per app, the runs of hours (a day at most each) from its first rollup hour to its last one,
  /// ending at or before `before`, without a mark; hours without rows included (their mark says
  /// there is nothing to count).
  static func unbuilt(_ db: Database, before: Int64) throws -> [(String, Range<Int64>)] {
    var pieces: [(String, Range<Int64>)] = []
    let apps = try Row.fetchAll(
      db, sql: "SELECT app, min(hour) AS first, max(hour) AS last FROM rollup_names GROUP BY app")
    for row in apps {
      let app: String = row["app"]
      let first: Int64 = row["first"]
      let last: Int64 = row["last"]
      // Hours that end at or before `before`, up to the app's last hour with rows.
      let end = min(before / Self.length * Self.length, last + Self.length)
      guard first < end else { continue }
      let marked = Set(
        try Int64.fetchAll(
          db, sql: "SELECT hour FROM \(tables.hours) WHERE app = ? AND hour >= ? AND hour < ?",
          arguments: [app, first, end]))
      var start: Int64?
      for hour in stride(from: first, through: end, by: Int(Self.length)) {
        let open = hour < end && !marked.contains(hour)
        if open, start == nil { start = hour }
        if let from = start, !open || hour - from == 24 * Self.length {
          pieces.append((app, from..<hour))
          start = open ? hour : nil
        }
      }
    }
    return pieces
  }

  /// Numbers the devices of `hours` that have no number yet, writes a set per hour, name and
  /// dimensions, and marks every hour; returns the hours marked.
  static func build(_ db: Database, app: String, hours: Range<Int64>) throws -> Int {
    let range: StatementArguments = [app, hours.lowerBound, hours.upperBound]
    let next =
      try Int64.fetchOne(
        db, sql: "SELECT coalesce(max(num) + 1, 0) FROM \(tables.numbers) WHERE app = ?",
        arguments: [app]) ?? 0
    try db.execute(
      sql: """
        INSERT INTO \(tables.numbers) (app, device_id, num)
        SELECT ?1, device_id, ?4 + row_number() OVER (ORDER BY device_id) - 1 FROM (
          SELECT DISTINCT device_id FROM rollup_names r WHERE app = ?1 AND hour >= ?2 AND hour < ?3
            AND NOT EXISTS (SELECT 1 FROM \(tables.numbers) n WHERE n.app = ?1 AND n.device_id = r.device_id))
        """, arguments: range + [next])
    var sets: [[DatabaseValue]: (events: Int64, numbers: [UInt32])] = [:]
    // The hours' rows in key order, each device's number looked up (`CROSS JOIN` keeps the rollup
    // outside: driven by the numbers, SQLite read every hour of each device to keep the day's).
    let rows = try Row.fetchCursor(
      db,
      sql: """
        SELECT r.hour, r.name, r.platform, r.app_version, r.os_version, r.events, n.num
        FROM rollup_names r CROSS JOIN \(tables.numbers) n ON n.app = r.app AND n.device_id = r.device_id
        WHERE r.app = ? AND r.hour >= ? AND r.hour < ?
        """, arguments: range)
    while let row = try rows.next() {
      let key = (0..<5).map { row[$0] as DatabaseValue }
      guard let number = UInt32(exactly: row[6] as Int64) else {
        throw StoreError.unavailable("app \(app) has more devices than a device set numbers (2^32)")
      }
      sets[key, default: (0, [])].events += row[5] as Int64
      sets[key, default: (0, [])].numbers.append(number)
    }
    // Another builder (a second collector on the file) may have built some of these hours since
    // they were found unbuilt: they are built again, from this transaction's rows.
    for table in [tables.sets, tables.hours] {
      try db.execute(sql: "DELETE FROM \(table) WHERE app = ? AND hour >= ? AND hour < ?", arguments: range)
    }
    let insert = try db.cachedStatement(
      sql: "INSERT INTO \(tables.sets) (app, hour, name, platform, app_version, os_version, events, devices) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    for (key, set) in sets {
      var arguments: StatementArguments = [app]
      arguments += StatementArguments(key)
      arguments += [set.events, Data(DeviceSetCoding.encode(set.numbers))]
      try insert.execute(arguments: arguments)
    }
    let mark = try db.cachedStatement(sql: "INSERT INTO \(tables.hours) (app, hour) VALUES (?, ?)")
    for hour in stride(from: hours.lowerBound, to: hours.upperBound, by: Int(Self.length)) {
      try mark.execute(arguments: [app, hour])
    }
    return hours.count(by: Self.length)
  }

  /// The rows of a device-set query, the set of the `devices` column decoded, the other columns
  /// read as ``SQLiteRows/read(_:sql:arguments:)`` reads them.
  static func read(_ db: Database, sql: String, arguments: [SQLValue]) throws -> [DeviceSetRow] {
    var found: [DeviceSetRow] = []
    try SQLiteRows.each(db, sql: sql, arguments: arguments) { statement, columns in
      var names: [String] = []
      var values: [SQLValue] = []
      var devices: [UInt32] = []
      for (index, column) in columns.enumerated() {
        if column == "devices" {
          let bytes = UnsafeRawBufferPointer(
            start: sqlite3_column_blob(statement, Int32(index)),
            count: Int(sqlite3_column_bytes(statement, Int32(index))))
          DeviceSetCoding.decode(bytes, into: &devices)
        } else {
          names.append(column)
          values.append(SQLiteRows.value(statement, Int32(index)))
        }
      }
      found.append(DeviceSetRow(row: SQLRow(columns: names, values: values), devices: devices))
    }
    return found
  }
}

extension Range<Int64> {
  /// How many steps of `step` the range holds.
  fileprivate func count(by step: Int64) -> Int { Int((upperBound - lowerBound) / step) }
}
