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

  /// Whether the events a write inserted (their rowids above `?`) fall in a built hour: most writes
  /// are of the current hours, never built, and skip ``invalidateInserted``.
  static let insertedTouchBuilt = deviceSets.touchesBuilt(
    hoursOf: "events", where: "rowid > ?", hour: rollups.hour(of: "occurred_at"))
}

extension SQLiteEventStore: DeviceSetKeeping {
  /// Builds the sets of every app's hours that end at or before `before` and have none, the hours of
  /// one app in runs of ``DeviceSetSQL/hoursPerBuild`` per write transaction (writes go on between
  /// them); returns the hours built.
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

  /// Reads a device-set query on one of the WAL readers, its sets decoded.
  public func readDeviceSets(_ sql: String, _ arguments: [SQLValue]) async throws -> [DeviceSetRow] {
    try await run(on: SQLiteWorker.reports) { [pool] in
      try pool.read { db in try SQLiteDeviceSets.read(db, sql: sql, arguments: arguments) }
    }
  }
}

/// Building and reading the device sets on SQLite.
enum SQLiteDeviceSets {
  private static var tables: DeviceSetTables { SQLiteSchema.deviceSets.tables }

  /// Per app, the runs of hours not built yet (``DeviceSetSQL/unbuilt(first:last:before:marked:)``).
  static func unbuilt(_ db: Database, before: Int64) throws -> [(String, Range<Int64>)] {
    var pieces: [(String, Range<Int64>)] = []
    for row in try Row.fetchAll(db, sql: SQLiteSchema.deviceSets.appHours) {
      let app: String = row["app"]
      let marked = Set(
        try Int64.fetchAll(db, sql: "SELECT hour FROM \(tables.hours) WHERE app = ?", arguments: [app]))
      let runs = DeviceSetSQL.unbuilt(first: row["first"], last: row["last"], before: before, marked: marked)
      pieces += runs.map { (app, $0) }
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
      sql: SQLiteSchema.deviceSets.numberDevices(placeholder: SQLiteDialect().placeholder), arguments: range + [next])
    // Keyed by their text's bytes, as the tables key their rows (``StepCacheBuild/Key``).
    var sets: [StepCacheBuild.Key: (events: Int64, numbers: [UInt32])] = [:]
    // The hours' rows in key order, each device's number looked up (`CROSS JOIN` keeps the rollup
    // outside: driven by the numbers, SQLite read every hour of each device to keep the day's).
    let rows = try Row.fetchCursor(
      db,
      sql: """
        SELECT r.hour, r.name, r.platform, r.app_version, r.os_version, r.events, n.num
        FROM rollup_names r CROSS JOIN \(tables.numbers) n ON n.app = r.app AND n.device_id = r.device_id
        WHERE r.app = ? AND r.hour >= ? AND r.hour < ?
        """, arguments: range)
    var parameters = ParameterCacheBuild()
    while let row = try rows.next() {
      let key = StepCacheBuild.Key(hour: row[0], name: row[1], platform: row[2], appVersion: row[3], osVersion: row[4])
      let number = try DeviceSetCoding.number(row[6], app: app)
      let events: Int64 = row[5]
      sets[key, default: (0, [])].events += events
      sets[key, default: (0, [])].numbers.append(number)
      parameters.addEvents(key, number: number, events: events)
    }
    // Another builder (a second collector on the file) may have built some of these hours since
    // they were found unbuilt: they are built again, from this transaction's rows.
    for table in SQLiteSchema.deviceSets.built {
      try db.execute(sql: "DELETE FROM \(table) WHERE app = ? AND hour >= ? AND hour < ?", arguments: range)
    }
    try write(db, app: app, sets: sets)
    try writeSteps(db, app: app, range: range)
    try writeParameters(db, app: app, range: range, &parameters)
    let mark = try db.cachedStatement(sql: "INSERT INTO \(tables.hours) (app, hour) VALUES (?, ?)")
    for hour in stride(from: hours.lowerBound, to: hours.upperBound, by: Int(RollupTables.hour)) {
      try mark.execute(arguments: [app, hour])
    }
    return hours.count(by: RollupTables.hour)
  }

  /// Writes `sets` (keyed by hour, name, platform, app version and OS version) and their totals
  /// by hour and name.
  private static func write(_ db: Database, app: String, sets: [StepCacheBuild.Key: (events: Int64, numbers: [UInt32])])
    throws
  {
    let insert = try db.cachedStatement(
      sql: "INSERT INTO \(tables.sets) (app, hour, name, platform, app_version, os_version, events, devices) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    var totals: [StepCacheBuild.Key: (events: Int64, numbers: [UInt32])] = [:]
    for (key, set) in sets {
      try insert.execute(arguments: [
        app, key.hour, key.name, key.platform, key.appVersion, key.osVersion, set.events,
        Data(DeviceSetCoding.encode(set.numbers)),
      ])
      let total = StepCacheBuild.Key(hour: key.hour, name: key.name, platform: "", appVersion: "", osVersion: "")
      totals[total, default: (0, [])].events += set.events
      totals[total, default: (0, [])].numbers += set.numbers
    }
    let total = try db.cachedStatement(
      sql: "INSERT INTO \(tables.totals) (app, hour, name, events, devices) VALUES (?, ?, ?, ?, ?)")
    for (key, set) in totals {
      try total.execute(arguments: [app, key.hour, key.name, set.events, Data(DeviceSetCoding.encode(set.numbers))])
    }
  }

  /// Writes the step cache of the app's hours in `range` (app, from, to) from their events
  /// (``StepCacheBuild``).
  private static func writeSteps(_ db: Database, app: String, range: StatementArguments) throws {
    var build = StepCacheBuild()
    let events = try Row.fetchCursor(
      db, sql: SQLiteSchema.deviceSets.stepEventsOfHours(events: "events", dialect: SQLiteDialect()), arguments: range)
    while let event = try events.next() {
      try build.add(
        name: event[0], platform: event[1], appVersion: event[2], osVersion: event[3], number: event[4],
        time: event[5], id: event[6], app: app)
    }
    let insert = try db.cachedStatement(
      sql: "INSERT INTO \(tables.steps) (app, hour, name, platform, app_version, os_version, events) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?)")
    for (key, numbers) in build.finish() {
      try insert.execute(arguments: [
        app, key.hour, key.name, key.platform, key.appVersion, key.osVersion, Data(StepCacheCoding.encode(numbers)),
      ])
    }
  }

  /// Writes the parameter cache of the app's hours in `range` (app, from, to) from their events'
  /// parameters and `build`'s events per device (``ParameterCacheBuild``).
  private static func writeParameters(
    _ db: Database, app: String, range: StatementArguments, _ build: inout ParameterCacheBuild
  ) throws {
    let parameters = try Row.fetchCursor(
      db, sql: SQLiteSchema.deviceSets.parametersOfHours(events: "events", dialect: SQLiteDialect()), arguments: range)
    while let row = try parameters.next() {
      try build.addParameter(
        name: row[0], platform: row[1], appVersion: row[2], osVersion: row[3], number: row[4], time: row[5],
        event: row[6], key: row[7], value: row[8], app: app)
    }
    let insert = try db.cachedStatement(
      sql: "INSERT INTO \(tables.parameters) (app, hour, name, platform, app_version, os_version, key, vals, entries) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    for row in build.finish() {
      let key = row.key.row
      try insert.execute(arguments: [
        app, key.hour, key.name, key.platform, key.appVersion, key.osVersion, row.key.key,
        ParameterCacheCoding.encode(row.values), Data(StepCacheCoding.encode(row.entries)),
      ])
    }
  }

  /// The rows of a device-set query, the set of the `devices` column decoded, the other columns
  /// read as ``SQLiteRows/read(_:sql:arguments:)`` reads them.
  static func read(_ db: Database, sql: String, arguments: [SQLValue]) throws -> [DeviceSetRow] {
    var found: [DeviceSetRow] = []
    // The other columns' names and indexes, the same for every row: found once.
    var others: (names: [String], indexes: [Int32], set: Int32?)?
    try SQLiteRows.each(db, sql: sql, arguments: arguments) { statement, columns in
      let layout =
        others
        ?? (
          columns.filter { $0 != "devices" }, columns.indices.filter { columns[$0] != "devices" }.map(Int32.init),
          columns.firstIndex(of: "devices").map(Int32.init)
        )
      others = layout
      var devices: [UInt32] = []
      if let set = layout.set {
        let bytes = UnsafeRawBufferPointer(
          start: sqlite3_column_blob(statement, set), count: Int(sqlite3_column_bytes(statement, set)))
        DeviceSetCoding.decode(bytes, into: &devices)
      }
      let values = layout.indexes.map { SQLiteRows.value(statement, $0) }
      found.append(DeviceSetRow(row: SQLRow(columns: layout.names, values: values), devices: devices))
    }
    return found
  }
}

extension Range<Int64> {
  /// How many steps of `step` the range holds.
  fileprivate func count(by step: Int64) -> Int { Int((upperBound - lowerBound) / step) }
}
