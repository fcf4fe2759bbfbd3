public import CollectorStore
import Logging
import NIOCore
import PostgresNIO

extension PostgresTables {
  /// The device sets, a cache of the names rollup (``DeviceSetTables``).
  var deviceSets: DeviceSetSQL { DeviceSetSQL(prefix: "\"\(schema)\".") }

  /// Taken first by every transaction that changes the names rollup other than an insert (whose one
  /// statement takes it before its snapshot): it waits for a device-set build in progress
  /// (``buildLock``), so the sets and marks it deletes include what that build writes.
  var namesWriteLock: String { "LOCK TABLE \(rollups.tables.names) IN ROW EXCLUSIVE MODE" }

  /// Taken first by a device-set build: no write changes the names rollup until the build commits,
  /// and builds take turns (the mode conflicts with itself).
  var buildLock: String { "LOCK TABLE \(rollups.tables.names) IN SHARE ROW EXCLUSIVE MODE" }

  /// Deletes the sets and marks of the hours of the rows `inserted` returns, as data-modifying
  /// `WITH` queries of the insert.
  var invalidateInserted: String {
    deviceSets.invalidate(hoursOf: "inserted", where: "true", hour: rollups.hour(of: "occurred_at"))
      .enumerated().map { "sets\($0.offset) AS (\($0.element))" }.joined(separator: ",\n")
  }
}

extension PostgresEventStore: DeviceSetKeeping {
  public var deviceSets: DeviceSetTables? { tables.deviceSets.tables }

  /// Builds the sets of every app's hours that end at or before `before` and have none, the hours of
  /// one app in runs of ``DeviceSetSQL/hoursPerBuild`` per transaction; returns the hours built. Each
  /// transaction holds ``PostgresTables/buildLock``: writes to the names rollup wait for it (a day's
  /// build of a store of 10M events, steps and parameters included, took 4–8 s, Docs/Benchmarks.md;
  /// a running collector builds an hour at a time). First marks the orders of hours built before
  /// their marks existed (``markUnmarkedHours()``).
  @discardableResult
  public func buildDeviceSets(before: Int64) async throws -> Int {
    try await markUnmarkedHours()
    var pieces: [(String, Range<Int64>)] = []
    for row in try await read(tables.deviceSets.appHours, []) {
      guard let app = row["app"].text, let first = row["first"].int, let last = row["last"].int else { continue }
      let marked = try await read("SELECT hour FROM \(tables.deviceSets.tables.hours) WHERE app = $1", [.text(app)])
      let runs = DeviceSetSQL.unbuilt(
        first: first, last: last, before: before, marked: Set(marked.compactMap { $0["hour"].int }))
      pieces += runs.map { (app, $0) }
    }
    var built = 0
    for (app, hours) in pieces {
      built += try await guarded {
        try await client.withTransaction(logger: logger) { connection in
          try await buildDeviceSets(connection, app: app, hours: hours)
        }
      }
    }
    return built
  }

  /// Numbers the devices of `hours` that have none, writes a set per hour, name and dimensions, marks
  /// the hours' orders alone with their key (``PostgresTables/markSingleOrders``) and marks every
  /// hour (deleting first what another builder wrote for them); returns the hours marked.
  private func buildDeviceSets(_ connection: PostgresConnection, app: String, hours: Range<Int64>) async throws -> Int {
    let sql = tables.deviceSets
    var range = PostgresBindings()
    range.append(app)
    range.append(hours.lowerBound)
    range.append(hours.upperBound)
    try await connection.query(PostgresQuery(unsafeSQL: tables.buildLock), logger: logger)
    var numbering = range
    numbering.append(
      try await Self.count(
        connection.query(
          "SELECT coalesce(max(num) + 1, 0)::bigint FROM \(unescaped: sql.tables.numbers) WHERE app = \(app)",
          logger: logger)))
    try await connection.query(
      PostgresQuery(unsafeSQL: sql.numberDevices(placeholder: PostgresDialect().placeholder), binds: numbering),
      logger: logger)
    var set = try await setColumns(connection, app: app, range)
    for table in sql.built {
      try await connection.query(
        PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE app = $1 AND hour >= $2 AND hour < $3", binds: range),
        logger: logger)
    }
    try await connection.query(
      """
      INSERT INTO \(unescaped: sql.tables.sets) (app, hour, name, platform, app_version, os_version, events, devices)
      SELECT \(app), * FROM unnest(\(set.hours)::bigint[], \(set.names)::text[], \(set.platforms)::text[],
        \(set.versions)::text[], \(set.os)::text[], \(set.events)::bigint[], \(set.devices)::bytea[])
      """, logger: logger)
    let totals = set.totals.sorted { ($0.key.hour, $0.key.name) < ($1.key.hour, $1.key.name) }
    try await connection.query(
      """
      INSERT INTO \(unescaped: sql.tables.totals) (app, hour, name, events, devices)
      SELECT \(app), * FROM unnest(\(totals.map(\.key.hour))::bigint[], \(totals.map(\.key.name))::text[],
        \(totals.map(\.value.events))::bigint[],
        \(totals.map { ByteBuffer(bytes: DeviceSetCoding.encode($0.value.numbers)) })::bytea[])
      """, logger: logger)
    try await writeSteps(connection, app: app, range)
    try await writeParameters(connection, app: app, range, &set.parameters)
    try await markSingleOrders(connection, range)
    try await connection.query(
      PostgresQuery(
        unsafeSQL: "INSERT INTO \(sql.tables.hours) (app, hour) "
          + "SELECT $1, h FROM generate_series($2::bigint, $3::bigint - \(RollupTables.hour), \(RollupTables.hour)) AS h",
        binds: range), logger: logger)
    return Int((hours.upperBound - hours.lowerBound) / RollupTables.hour)
  }

  /// Writes the step cache of the app's hours in `range` (app, from, to) from their events
  /// (``StepCacheBuild``), in one `unnest` insert.
  private func writeSteps(_ connection: PostgresConnection, app: String, _ range: PostgresBindings) async throws {
    let events = try await connection.query(
      PostgresQuery(
        unsafeSQL: tables.deviceSets.stepEventsOfHours(events: tables.events, dialect: PostgresDialect()),
        binds: range), logger: logger)
    var build = StepCacheBuild()
    for try await (name, platform, version, os, number, time, id) in events.decode(
      (String, String, String, String, Int64, Int64, String).self)
    {
      try build.add(
        name: name, platform: platform, appVersion: version, osVersion: os, number: number, time: time, id: id, app: app
      )
    }
    let rows = build.finish()
    guard !rows.isEmpty else { return }
    try await connection.query(
      """
      INSERT INTO \(unescaped: tables.deviceSets.tables.steps) (app, hour, name, platform, app_version, os_version, events)
      SELECT \(app), * FROM unnest(\(rows.map(\.key.hour))::bigint[], \(rows.map(\.key.name))::text[],
        \(rows.map(\.key.platform))::text[], \(rows.map(\.key.appVersion))::text[], \(rows.map(\.key.osVersion))::text[],
        \(rows.map { ByteBuffer(bytes: StepCacheCoding.encode($0.numbers)) })::bytea[])
      """, logger: logger)
  }

  /// Writes the parameter cache of the app's hours in `range` (app, from, to) from their events'
  /// parameters and `build`'s events per device (``ParameterCacheBuild``), in one `unnest` insert.
  private func writeParameters(
    _ connection: PostgresConnection, app: String, _ range: PostgresBindings, _ build: inout ParameterCacheBuild
  ) async throws {
    let parameters = try await connection.query(
      PostgresQuery(
        unsafeSQL: tables.deviceSets.parametersOfHours(events: tables.events, dialect: PostgresDialect()),
        binds: range), logger: logger)
    for try await (name, platform, version, os, number, time, event, key, value) in parameters.decode(
      (String, String, String, String, Int64, Int64, String, String, String?).self)
    {
      try build.addParameter(
        name: name, platform: platform, appVersion: version, osVersion: os, number: number, time: time, event: event,
        key: key, value: value, app: app)
    }
    let rows = build.finish()
    guard !rows.isEmpty else { return }
    let keys = rows.map(\.key.row)
    try await connection.query(
      """
      INSERT INTO \(unescaped: tables.deviceSets.tables.parameters)
        (app, hour, name, platform, app_version, os_version, key, vals, entries)
      SELECT \(app), * FROM unnest(\(keys.map(\.hour))::bigint[], \(keys.map(\.name))::text[],
        \(keys.map(\.platform))::text[], \(keys.map(\.appVersion))::text[], \(keys.map(\.osVersion))::text[],
        \(rows.map(\.key.key))::text[], \(rows.map { ParameterCacheCoding.encode($0.values) })::text[],
        \(rows.map { ByteBuffer(bytes: StepCacheCoding.encode($0.entries)) })::bytea[])
      """, logger: logger)
  }

  /// The sets of the app's hours in `range` (app, from, to), as the columns of their rows.
  private func setColumns(_ connection: PostgresConnection, app: String, _ range: PostgresBindings) async throws
    -> SetColumns
  {
    let rows = try await connection.query(
      PostgresQuery(
        unsafeSQL: """
          SELECT r.hour, r.name, r.platform, r.app_version, r.os_version, sum(r.events)::bigint, array_agg(n.num),
            array_agg(r.events)
          FROM \(tables.deviceSets.names) r
          JOIN \(tables.deviceSets.tables.numbers) n ON n.app = r.app AND n.device_id = r.device_id
          WHERE r.app = $1 AND r.hour >= $2 AND r.hour < $3 GROUP BY 1, 2, 3, 4, 5
          """, binds: range), logger: logger)
    var set = SetColumns()
    // Both arrays are fed row by row, so they are in the same order.
    for try await (hour, name, platform, version, os, events, numbers, perDevice) in rows.decode(
      (Int64, String, String, String, String, Int64, [Int64], [Int64]).self)
    {
      set.hours.append(hour)
      set.names.append(name)
      set.platforms.append(platform)
      set.versions.append(version)
      set.os.append(os)
      set.events.append(events)
      let devices = try numbers.map { try DeviceSetCoding.number($0, app: app) }
      let row = StepCacheBuild.Key(hour: hour, name: name, platform: platform, appVersion: version, osVersion: os)
      for (number, count) in zip(devices, perDevice) { set.parameters.addEvents(row, number: number, events: count) }
      set.devices.append(ByteBuffer(bytes: DeviceSetCoding.encode(devices)))
      set.totals[SetColumns.Key(hour: hour, name: name), default: (0, [])].events += events
      set.totals[SetColumns.Key(hour: hour, name: name), default: (0, [])].numbers += devices
    }
    return set
  }

  /// Reads a device-set query, its sets decoded from `bytea`.
  public func readDeviceSets(_ sql: String, _ arguments: [SQLValue]) async throws -> [DeviceSetRow] {
    try await guarded {
      let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(arguments)), logger: logger)
      var result: [DeviceSetRow] = []
      for try await row in rows {
        var found = DeviceSetRow(row: SQLRow(columns: [], values: []), devices: [])
        var other: (names: [String], values: [SQLValue]) = ([], [])
        for cell in row {
          if cell.columnName == "devices" {
            cell.bytes?.withUnsafeReadableBytes { DeviceSetCoding.decode($0, into: &found.devices) }
          } else {
            other.names.append(cell.columnName)
            other.values.append(Self.value(cell))
          }
        }
        found.row = SQLRow(columns: other.names, values: other.values)
        result.append(found)
      }
      return result
    }
  }
}

/// The sets of a build as the columns `unnest` inserts.
private struct SetColumns {
  var hours: [Int64] = []
  var names: [String] = []
  var platforms: [String] = []
  var versions: [String] = []
  var os: [String] = []
  var events: [Int64] = []
  var devices: [ByteBuffer] = []
  /// Per hour and name, over every platform and version: the events and the devices' numbers.
  var totals: [Key: (events: Int64, numbers: [UInt32])] = [:]
  /// The parameter cache being built, its events per device added.
  var parameters = ParameterCacheBuild()

  struct Key: Hashable {
    var hour: Int64
    var name: String

    /// Names are told apart by their bytes (``ExactText``), as the tables key them.
    static func == (lhs: Key, rhs: Key) -> Bool { lhs.hour == rhs.hour && lhs.name.hasSameBytes(as: rhs.name) }

    func hash(into hasher: inout Hasher) {
      hasher.combine(hour)
      hasher.combine(ExactText(name))
    }
  }
}
