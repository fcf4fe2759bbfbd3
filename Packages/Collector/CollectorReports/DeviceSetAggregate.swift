import CollectorStore

/// ``ReportQuery`` over the names rollup answered from the store's device sets
/// (``DeviceSetTables``): the sets of the range's built hours and the rollup rows of the others,
/// their events added and their devices counted once each in the collector (``DeviceTally``).
extension SQLReports {
  /// The rows of `query` from the device sets, the same as ``aggregate(_:)`` reads from the rollups;
  /// `nil` when the store keeps no sets, none of the range's hours is built, the range's unbuilt
  /// hours fall in more than 64 runs, or the query is not one of the activity rollups counting
  /// events and devices.
  ///
  /// A query of the sessions rollup is answered from the sets too: both rollups hold every event,
  /// by the same hour, device and dimensions, so the events and devices of a group of hours and
  /// dimensions are the same in both, and the sets of all names hold them.
  ///
  /// The built hours are read first, then the sets, the other hours' rollup rows and the built hours
  /// again in one statement (one snapshot on every engine). A write or a build between the two reads
  /// changes the built hours, and the statement is run again (three times at most, then `nil`), so
  /// an hour is never counted twice or not at all.
  func aggregateFromDeviceSets(_ query: ReportQuery) async throws -> [SQLRow]? {
    guard let tables = store.deviceSets, let names = rollups(query.filter)?.names, query.rollup != nil,
      Set(query.measures).isSubset(of: [.events, .devices])
    else { return nil }
    for _ in 0..<3 {
      var marks = SQLBuilder(store.dialect)
      let built = try await store.read(builtHours(query.filter, tables, &marks), marks.arguments)
      let builtHours = Set(built.compactMap { $0["mark"].int })
      guard !builtHours.isEmpty,
        let unbuilt = Self.runs(from: query.filter.from, to: query.filter.to, except: builtHours)
      else { return nil }
      if let rows = try await fromDeviceSets(query, tables: tables, names: names, built: builtHours, unbuilt: unbuilt) {
        return rows
      }
    }
    return nil
  }

  /// The tally of the sets of `built` and the rollup rows of `unbuilt`, or `nil` when the hours
  /// built when the statement ran are not `built`.
  private func fromDeviceSets(
    _ query: ReportQuery, tables: DeviceSetTables, names: String, built: Set<Int64>, unbuilt: [Range<Int64>]
  ) async throws -> [SQLRow]? {
    var sql = SQLBuilder(store.dialect)
    let none = (number: "CAST(NULL AS BIGINT)", text: "CAST(NULL AS TEXT)")
    // Without a platform or version, the totals per hour and name (a sixth of the rows at 10M).
    let byDimension =
      query.filter.platform != nil || query.filter.appVersion != nil || query.filter.osVersion != nil
      || query.dimensions.contains { if case .context = $0 { true } else { false } }
    var parts = [
      selection(
        query, from: byDimension ? tables.sets : tables.totals,
        adding: [
          "events AS e", "devices AS devices", "\(none.number) AS num", "\(none.text) AS device",
          "\(none.number) AS mark",
        ], &sql)
    ]
    if !unbuilt.isEmpty {
      let number = "(SELECT num FROM \(tables.numbers) n WHERE n.app = r.app AND n.device_id = r.device_id)"
      parts.append(
        selection(
          query, from: "\(names) r",
          adding: [
            "events AS e", "NULL AS devices", "\(number) AS num", "device_id AS device", "\(none.number) AS mark",
          ],
          runs: unbuilt, &sql))
    }
    let dimensions = query.dimensions.indices.map { "NULL AS \(query.column(of: $0))" }
    let marks = ["NULL AS e", "NULL AS devices", "NULL AS num", "NULL AS device", "hour AS mark"]
    parts.append(builtHours(query.filter, tables, selecting: (dimensions + marks).joined(separator: ", "), &sql))
    let found = try await store.readDeviceSets(parts.joined(separator: "\nUNION ALL\n"), sql.arguments)
    var tally = DeviceTally(query)
    var marked = Set<Int64>()
    for found in found {
      if let mark = found.row["mark"].int {
        marked.insert(mark)
      } else if let device = found.row["device"].text {
        tally.add(found.row, events: found.row["e"].int ?? 0, number: found.row["num"].int, device: device)
      } else {
        tally.add(found.row, events: found.row["e"].int ?? 0, numbers: found.devices)
      }
    }
    return marked == built ? tally.rows : nil
  }

  /// The statement selecting `columns` (the hour as `mark`) of the built hours of the filter's app
  /// and range.
  func builtHours(
    _ filter: ReportFilter, _ tables: DeviceSetTables, selecting columns: String = "hour AS mark",
    _ sql: inout SQLBuilder
  ) -> String {
    "SELECT \(columns) FROM \(tables.hours) WHERE app = \(sql.bind(filter.storedApp)) "
      + "AND hour >= \(sql.bind(filter.from)) AND hour < \(sql.bind(filter.to))"
  }

  /// The statement selecting `query`'s dimensions (`d0`, `d1`, …) and `columns` from `table` (the
  /// sets, or the names rollup) for its filter, its name, and the hours of `runs` when given.
  private func selection(
    _ query: ReportQuery, from table: String, adding columns: [String], runs: [Range<Int64>]? = nil,
    _ sql: inout SQLBuilder
  ) -> String {
    let dimensions = query.dimensions.enumerated().map { index, dimension in
      "\(expression(dimension, of: query, rollup: true, name: "name", &sql)) AS \(query.column(of: index))"
    }
    var conditions = sql.rollupConditions(query.filter)
    if let event = query.name { conditions += " AND name = \(sql.bind(event))" }
    if let runs {
      let hours = runs.map { "(hour >= \(sql.bind($0.lowerBound)) AND hour < \(sql.bind($0.upperBound)))" }
      conditions += " AND (\(hours.joined(separator: " OR ")))"
    }
    return "SELECT \((dimensions + columns).joined(separator: ", ")) FROM \(table) WHERE \(conditions)"
  }

  /// The hours of `[from, to)` not in `built`, as runs of whole hours; `nil` past 64 runs.
  static func runs(from: Int64, to: Int64, except built: Set<Int64>) -> [Range<Int64>]? {
    var runs: [Range<Int64>] = []
    var hour = RollupSQL.hour(of: from)
    while hour < to {
      if !built.contains(hour) {
        if let last = runs.last, last.upperBound == hour {
          runs[runs.count - 1] = last.lowerBound..<(hour + RollupTables.hour)
        } else {
          if runs.count == 64 { return nil }
          runs.append(hour..<(hour + RollupTables.hour))
        }
      }
      hour += RollupTables.hour
    }
    return runs
  }
}

/// The groups of a query read from device sets: per group, the events added up and the devices,
/// each counted once (a number from a set, or a device without a number yet by its id).
struct DeviceTally {
  private struct Group {
    var events: Int64 = 0
    var numbers: [UInt32] = []
    var unnumbered: Set<ExactText> = []

    mutating func add(events: Int64, numbers: some Collection<UInt32>) {
      self.events += events
      self.numbers.append(contentsOf: numbers)
    }

    mutating func add(events: Int64, unnumbered device: String) {
      self.events += events
      unnumbered.insert(ExactText(device))
    }
  }

  private let query: ReportQuery
  private var groups: [[SQLValue]: Group] = [:]
  private var largest: UInt32 = 0

  init(_ query: ReportQuery) { self.query = query }

  /// A set row: its group's events and devices.
  mutating func add(_ row: SQLRow, events: Int64, numbers: [UInt32]) {
    add(key: query.dimensions.indices.map { row[query.column(of: $0)] }, events: events, numbers: numbers)
  }

  /// A rollup row: its group's events, and its device by number, or by id when it has none.
  mutating func add(_ row: SQLRow, events: Int64, number: Int64?, device: String) {
    add(key: query.dimensions.indices.map { row[query.column(of: $0)] }, events: events, number: number, device: device)
  }

  /// Events and devices of the group of dimension values `key`.
  mutating func add(key: [SQLValue], events: Int64, numbers: some Collection<UInt32>) {
    groups[key, default: Group()].add(events: events, numbers: numbers)
    largest = max(largest, numbers.max() ?? 0)
  }

  /// Events of the group `key`, and their device by number, or by id when it has none.
  mutating func add(key: [SQLValue], events: Int64, number: Int64?, device: String) {
    if let number, let value = UInt32(exactly: number) {
      groups[key, default: Group()].add(events: events, numbers: CollectionOfOne(value))
      largest = max(largest, value)
    } else {
      groups[key, default: Group()].add(events: events, unnumbered: device)
    }
  }

  /// The groups as the SQL statement's rows: dimensions, then measures, in the query's order and
  /// limit. Without dimensions, one row even when nothing matched (the sum `NULL`, as in SQL).
  var rows: [SQLRow] {
    let columns = query.dimensions.indices.map { query.column(of: $0) } + query.measures.map(\.column)
    if groups.isEmpty && query.dimensions.isEmpty {
      return [SQLRow(columns: columns, values: query.measures.map { $0 == .events ? .null : .int(0) })]
    }
    var rows = groups.map { key, group in
      let devices = Int64(Self.distinct(group.numbers, below: Int(largest) + 1) + group.unnumbered.count)
      return SQLRow(columns: columns, values: key + query.measures.map { .int($0 == .events ? group.events : devices) })
    }
    let dimensions = query.dimensions.indices.map { query.column(of: $0) }
    let first = query.measures[0].column
    rows.sort { left, right in
      if query.order == .largestFirst, let l = left[first].int, let r = right[first].int, l != r { return l > r }
      for column in dimensions where left[column] != right[column] {
        return Self.ascending(left[column], right[column])
      }
      return false
    }
    return query.limit.map { Array(rows.prefix($0)) } ?? rows
  }

  /// How many distinct numbers `numbers` holds, each below `bound`: by a bitmap when they are many
  /// for the bound, else sorted.
  static func distinct(_ numbers: [UInt32], below bound: Int) -> Int {
    if numbers.count * 32 >= bound {
      var words = [UInt64](repeating: 0, count: (bound + 63) / 64)
      for number in numbers { words[Int(number >> 6)] |= 1 << UInt64(number & 63) }
      return words.reduce(0) { $0 + $1.nonzeroBitCount }
    }
    var count = 0
    var last: UInt32?
    for number in numbers.sorted() where number != last {
      count += 1
      last = number
    }
    return count
  }

  /// SQL's ascending order of two values of one column: numbers by value, text by its UTF-8 bytes
  /// (SQLite's `BINARY`), `NULL` first.
  static func ascending(_ left: SQLValue, _ right: SQLValue) -> Bool {
    switch (left, right) {
    case (.null, .null): false
    case (.null, _): true
    case (_, .null): false
    case (.text(let l), .text(let r)): l.precedesInBytes(r)
    default: (left.double ?? 0) < (right.double ?? 0)
    }
  }
}
