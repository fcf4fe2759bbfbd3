import CollectorStore

/// One event's values of one parameter from the parameter cache (``ParameterCacheBuild``): the
/// packed rows of the range's built hours, the events of the others.
extension SQLReports {
  /// The rows of `query` — events and devices per value of one parameter of one event — from the
  /// parameter cache, the same as ``aggregate(_:)`` reads from the events; `nil` when the store
  /// keeps no cache, the rollups do not answer the filter (a range off whole hours, an app name),
  /// the query is not of that shape, the key is one the cache does not answer
  /// (``DeviceSetSQL/caches(key:)``), none of the range's hours is built or its unbuilt hours fall
  /// in more than 64 runs.
  ///
  /// The built hours are read first, then in one statement (one snapshot) the parameter rows and
  /// device sets of the built hours, the events of the others and the built hours again: a write or
  /// a build between the two reads changes the built hours, and the statement is run again (three
  /// times at most, then `nil`).
  func aggregateFromParameterCache(_ query: ReportQuery) async throws -> [SQLRow]? {
    guard let tables = store.deviceSets, rollups(query.filter) != nil, query.source == .events,
      let event = query.name, query.dimensions.count == 1, case .parameter(let key) = query.dimensions[0],
      DeviceSetSQL.caches(key: key), Set(query.measures).isSubset(of: [.events, .devices])
    else { return nil }
    for _ in 0..<3 {
      var marks = SQLBuilder(store.dialect)
      let built = Set(
        try await store.read(builtHours(query.filter, tables, &marks), marks.arguments).compactMap { $0["mark"].int })
      guard !built.isEmpty,
        let unbuilt = Self.runs(from: query.filter.from, to: query.filter.to, except: built)
      else { return nil }
      let parts = ParameterCacheParts(query: query, event: event, key: key, tables: tables)
      var sql = SQLBuilder(store.dialect)
      let statement = parts.statement(
        events: store.eventsTable, unbuilt: unbuilt,
        marks: builtHours(query.filter, tables, selecting: parts.marks, &sql),
        &sql)
      let found = try await store.readDeviceSets(statement, sql.arguments)
      if let rows = Self.tally(found, query: query, built: built) { return rows }
    }
    return nil
  }

  /// The groups of `found`, or `nil` when its marks are not `built` or a row's values do not decode
  /// (read again, then from the events). A built hour and dimensions
  /// without a parameter row had no event with the key: its set's events and devices are `(none)`.
  private static func tally(_ found: [DeviceSetRow], query: ReportQuery, built: Set<Int64>) -> [SQLRow]? {
    var tally = DeviceTally(query)
    var marked = Set<Int64>()
    var keyed = Set<[SQLValue]>()
    var sets: [DeviceSetRow] = []
    for found in found {
      let row = found.row
      if let mark = row["mark"].int {
        marked.insert(mark)
      } else if let device = row["device"].text {
        tally.add(key: [row["vals"]], events: row["e"].int ?? 0, number: row["num"].int, device: device)
      } else if let text = row["vals"].text {
        guard let values = ParameterCacheCoding.decode(text) else { return nil }
        keyed.insert(["h", "p", "av", "ov"].map { row[$0] })
        add(found.devices, values: values, to: &tally)
      } else {
        sets.append(found)
      }
    }
    for set in sets where !keyed.contains(["h", "p", "av", "ov"].map { set.row[$0] }) {
      tally.add(key: [.text(ParameterCacheCoding.none)], events: set.row["e"].int ?? 0, numbers: set.devices)
    }
    return marked == built ? tally.rows : nil
  }

  /// Adds a parameter row's entries — (value index, device number, events) each — by value.
  private static func add(_ entries: [UInt32], values: [String], to tally: inout DeviceTally) {
    var byValue = [(events: Int64, numbers: [UInt32])](repeating: (0, []), count: values.count)
    for entry in stride(from: 0, to: entries.count - 2, by: 3) where Int(entries[entry]) < values.count {
      byValue[Int(entries[entry])].events += Int64(entries[entry + 2])
      byValue[Int(entries[entry])].numbers.append(entries[entry + 1])
    }
    for (index, value) in byValue.enumerated() where !value.numbers.isEmpty {
      tally.add(key: [.text(values[index])], events: value.events, numbers: value.numbers)
    }
  }
}

/// The statement of a parameter report from the cache: its parts share the columns `h`, `p`,
/// `av`, `ov` (hour and dimensions of a cached row), `vals`, `e` (events), `devices` (a row's
/// entries or a set), `device`, `num` (an uncached hour's device) and `mark`.
private struct ParameterCacheParts {
  let query: ReportQuery
  let event: String
  let key: String
  let tables: DeviceSetTables

  /// The columns of a mark row.
  var marks: String {
    "CAST(NULL AS BIGINT) AS h, CAST(NULL AS TEXT) AS p, CAST(NULL AS TEXT) AS av, CAST(NULL AS TEXT) AS ov, "
      + "NULL AS vals, NULL AS e, NULL AS devices, NULL AS device, NULL AS num, hour AS mark"
  }

  /// The parameter rows, the sets of the event, the events (of table `events`) of the `unbuilt`
  /// hours, and `marks`.
  func statement(events: String, unbuilt: [Range<Int64>], marks: String, _ sql: inout SQLBuilder) -> String {
    let cached = "hour AS h, platform AS p, app_version AS av, os_version AS ov"
    var parts = [
      "SELECT \(cached), vals AS vals, CAST(NULL AS BIGINT) AS e, entries AS devices, CAST(NULL AS TEXT) AS device, "
        + "CAST(NULL AS BIGINT) AS num, CAST(NULL AS BIGINT) AS mark FROM \(tables.parameters) "
        + "WHERE \(sql.rollupConditions(query.filter)) AND name = \(sql.bind(event)) AND key = \(sql.bind(key))",
      "SELECT \(cached), NULL AS vals, events AS e, devices AS devices, NULL AS device, NULL AS num, NULL AS mark "
        + "FROM \(tables.sets) WHERE \(sql.rollupConditions(query.filter)) AND name = \(sql.bind(event))",
    ]
    if !unbuilt.isEmpty { parts.append(uncached(events, unbuilt, &sql)) }
    parts.append(marks)
    return parts.joined(separator: "\nUNION ALL\n")
  }

  /// The events of the hours of `runs`, by value and device, each device's number when it has one.
  private func uncached(_ events: String, _ runs: [Range<Int64>], _ sql: inout SQLBuilder) -> String {
    let hours = runs.map {
      "(occurred_at >= \(sql.time(sql.bind($0.lowerBound))) AND occurred_at < \(sql.time(sql.bind($0.upperBound))))"
    }
    let grouped =
      "SELECT coalesce(\(sql.parameter(key)), '\(ParameterCacheCoding.none)') AS v, device_id, count(*) AS e "
      + "FROM \(events) WHERE \(sql.conditions(query.filter)) AND name = \(sql.bind(event)) "
      + "AND (\(hours.joined(separator: " OR "))) GROUP BY 1, 2"
    let number =
      "(SELECT num FROM \(tables.numbers) n WHERE n.app = \(sql.bind(query.filter.storedApp)) "
      + "AND n.device_id = g.device_id)"
    return "SELECT NULL AS h, NULL AS p, NULL AS av, NULL AS ov, g.v AS vals, g.e AS e, NULL AS devices, "
      + "g.device_id AS device, \(number) AS num, NULL AS mark FROM (\(grouped)) g"
  }
}
