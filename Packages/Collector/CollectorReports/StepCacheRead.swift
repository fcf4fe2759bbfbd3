import CollectorStore

/// A funnel's step events from the step cache (``StepCacheBuild``): the packed step rows of the
/// range's built hours and the events of the others.
extension SQLReports {
  /// The step events of `filter`'s range: the step rows of its built hours, the events of the
  /// other hours, in no order (``Funnel/byUnit(_:persons:)`` orders them); `nil` when the store
  /// keeps no cache, the reports read every event, the range is not on whole hours, an app name is
  /// asked for (the cache does not keep it), none of its hours is built or its unbuilt hours fall in
  /// more than 64 runs.
  ///
  /// The built hours are read first, then the step rows and the built hours again in one statement
  /// (one snapshot): a write or a build between the two reads changes the built hours, and the
  /// statement is run again (three times at most, then `nil`), so an hour is read from the cache or
  /// from the events, never from both or neither.
  func cachedStepEvents(_ filter: ReportFilter, steps: [String]) async throws -> StepEventColumns? {
    guard usesRollups, let tables = store.deviceSets, filter.appName == nil,
      filter.from % RollupTables.hour == 0, filter.to % RollupTables.hour == 0
    else { return nil }
    for _ in 0..<3 {
      var marks = SQLBuilder(store.dialect)
      let built = Set(
        try await store.read(builtHours(filter, tables, &marks), marks.arguments).compactMap { $0["mark"].int })
      guard !built.isEmpty, let unbuilt = Self.runs(from: filter.from, to: filter.to, except: built) else { return nil }
      var numbering = SQLBuilder(store.dialect)
      let numbers = "SELECT num, device_id FROM \(tables.numbers) WHERE app = \(numbering.bind(filter.storedApp))"
      async let devices = store.read(numbers, numbering.arguments)
      async let others = stepEvents(filter, steps: steps, runs: unbuilt)
      guard let rows = try await stepRows(filter, steps: steps, tables: tables, built: built) else { continue }
      var numbered = NumberedDevices(try await devices)
      var found = StepEventColumns()
      found.reserveCapacity(adding: rows.reduce(0) { $0 + $1.devices.count / 3 }, idBytes: 4)
      for row in rows {
        guard let hour = row.row["h"].int, let name = row.row["name"].text else { continue }
        found.appendCached(row.devices, name: name, hour: hour, devices: &numbered)
      }
      found.append(contentsOf: try await others)
      return found
    }
    return nil
  }

  /// The step rows of `filter`'s built hours for `steps`, the range's two halves read at once on two
  /// of the store's connections (sending and decoding the packed rows is most of a long funnel's
  /// time: PostgreSQL's 20-step funnel at 10M events, Docs/Benchmarks.md); `nil` when the hours
  /// built when either statement ran are not those of `built` in its half.
  private func stepRows(_ filter: ReportFilter, steps: [String], tables: DeviceSetTables, built: Set<Int64>)
    async throws -> [DeviceSetRow]?
  {
    let middle = filter.from + (filter.to - filter.from) / 2 / RollupTables.hour * RollupTables.hour
    guard middle > filter.from else {
      return try await stepRowsOfPart(filter, steps: steps, tables: tables, built: built)
    }
    var (first, second) = (filter, filter)
    (first.to, second.from) = (middle, middle)
    async let early = stepRowsOfPart(first, steps: steps, tables: tables, built: built.filter { $0 < middle })
    let late = try await stepRowsOfPart(second, steps: steps, tables: tables, built: built.filter { $0 >= middle })
    guard let early = try await early, let late else { return nil }
    return early + late
  }

  /// The step rows of `filter`'s built hours for `steps`, or `nil` when the hours built when the
  /// statement ran are not `built`.
  private func stepRowsOfPart(_ filter: ReportFilter, steps: [String], tables: DeviceSetTables, built: Set<Int64>)
    async throws -> [DeviceSetRow]?
  {
    var sql = SQLBuilder(store.dialect)
    let names = Set(steps).sorted().map { sql.bind($0) }.joined(separator: ", ")
    let rows =
      "SELECT hour AS h, name AS name, events AS devices, CAST(NULL AS BIGINT) AS mark FROM \(tables.steps) "
      + "WHERE \(sql.rollupConditions(filter)) AND name IN (\(names))"
    let marks = builtHours(
      filter, tables, selecting: "hour AS h, CAST(NULL AS TEXT) AS name, NULL AS devices, hour AS mark", &sql)
    let found = try await store.readDeviceSets(rows + "\nUNION ALL\n" + marks, sql.arguments)
    var marked = Set<Int64>()
    var steps: [DeviceSetRow] = []
    for row in found {
      if let mark = row.row["mark"].int { marked.insert(mark) } else { steps.append(row) }
    }
    return marked == built ? steps : nil
  }

  /// The step events of the hours of `runs`, read from the events.
  private func stepEvents(_ filter: ReportFilter, steps: [String], runs: [Range<Int64>]) async throws
    -> StepEventColumns
  {
    var found = StepEventColumns()
    for run in runs {
      var part = filter
      (part.from, part.to) = (max(filter.from, run.lowerBound), min(filter.to, run.upperBound))
      found.append(contentsOf: try await stepEvents(part, steps: steps, limit: nil))
    }
    return found
  }
}
