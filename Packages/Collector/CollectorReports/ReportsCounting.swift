public import CollectorStore
import CollectorWire
import Foundation

/// The reports that count, written once over ``ReportQuery``: every engine answers them through its
/// ``ReportEngine/aggregate(_:)``.
extension ReportEngine {
  /// Events, devices, people, sessions and counter increments, for the range and the range before it.
  public func overview(_ filter: ReportFilter) async throws -> Overview {
    async let current = overviewFigures(filter)
    async let previous = overviewFigures(filter.previous)
    return Overview(current: try await current, previous: try await previous)
  }

  /// The overview's figures of one range: ``population(_:)`` and ``aggregate(_:)`` asked at once.
  public func overviewFigures(_ filter: ReportFilter) async throws -> Overview.Figures {
    try await Overview.Figures(
      filter, population: { try await population($0) }, aggregate: { try await aggregate($0) })
  }

  /// Events by name: count and devices, most frequent first.
  public func topEvents(_ filter: ReportFilter, limit: Int) async throws -> CountList {
    let query = try ReportQuery(filter, by: [.name], measuring: [.events, .devices], limit: limit)
    return CountList(dimension: "event", rows: try await countRows(query))
  }

  /// Shares by platform, OS version, app version or app name; versions newest first, in version
  /// order (`10.0` above `9.0`).
  public func breakdown(_ filter: ReportFilter, by dimension: ReportDimension) async throws -> CountList {
    let query = try ReportQuery(filter, by: [.context(dimension)], measuring: [.events, .devices], limit: 1_000)
    var rows = try await countRows(query)
    if dimension == .appVersion || dimension == .osVersion {
      rows.sort { SemanticVersion($0.name) > SemanticVersion($1.name) }
    }
    return CountList(dimension: dimension.rawValue.replacingOccurrences(of: "-", with: " "), rows: rows)
  }

  /// The most frequent values of one parameter of one event (`(none)` for events without it).
  public func parameterValues(_ filter: ReportFilter, event: String, parameter: String, limit: Int)
    async throws -> CountList
  {
    let query = try ReportQuery(
      filter, named: event, by: [.parameter(parameter)], measuring: [.events, .devices], limit: limit)
    return CountList(dimension: parameter, rows: try await countRows(query))
  }

  /// Counter totals per name (SimpleAnalytics' counters), largest first.
  public func counters(_ filter: ReportFilter, limit: Int) async throws -> CountList {
    let query = try ReportQuery(filter, of: .counters, by: [.name], measuring: [.total, .devices], limit: limit)
    return CountList(dimension: "counter", rows: try await countRows(query))
  }

  /// Counts and devices per hour or day, for all events or one; every bucket of the range present.
  public func timeSeries(_ filter: ReportFilter, bucket: ReportBucket, event: String?) async throws -> TimeSeries {
    guard bucket != .week else { throw FieldError(field: "bucket", reason: "is hour or day") }
    guard (filter.to - filter.from) / bucket.milliseconds <= 10_000 else {
      throw FieldError(field: "bucket", reason: "more than 10,000 \(bucket.rawValue)s in the range")
    }
    let query = try ReportQuery(
      filter, named: event, by: [.bucket(bucket)], measuring: [.events, .devices], order: .dimensions)
    var byBucket: [Int64: (Int64, Int64)] = [:]
    for row in try await aggregate(query) {
      byBucket[row[query.column(of: 0)].int ?? 0] = (row[.events], row[.devices])
    }
    // Every bucket of the range in the filter's zone: a DST day is 23 or 25 hours long.
    let points = filter.zone.buckets(from: filter.from, to: filter.to, bucket).map { key, start in
      let (count, devices) = byBucket[key] ?? (0, 0)
      return TimeSeries.Point(start: start, count: count, devices: devices)
    }
    return TimeSeries(bucket: bucket, event: event, points: points)
  }

  /// Rows of one dimension and a count (events or total) and devices, as counts with shares of
  /// everything the query counts — not of the rows returned: when the limit cut rows off, the whole
  /// is counted once more without the dimension, so a share does not change with `limit`.
  func countRows(_ query: ReportQuery) async throws -> [CountRow] {
    let rows = try await aggregate(query)
    let counted = query.measures[0]
    // Shares from a double total: counts near Int64.max cannot overflow the sum.
    var total = rows.reduce(0.0) { $0 + Double($1[counted]) }
    if let limit = query.limit, rows.count >= limit {
      let whole = try ReportQuery(query.filter, of: query.source, named: query.name, by: [], measuring: [counted])
      total = Double(try await aggregate(whole).first?[counted] ?? 0)
    }
    return rows.map { row in
      let count = row[counted]
      return CountRow(
        name: row[query.column(of: 0)].text ?? "", count: count, devices: row[.devices],
        share: total == 0 ? 0 : Double(count) * 100 / total)
    }
  }
}

extension SQLRow {
  /// The value of `measure` in a row of a ``ReportQuery`` (0 when absent).
  public subscript(_ measure: ReportQuery.Measure) -> Int64 { self[measure.column].int ?? 0 }
}

extension ReportTime {
  /// `value` rounded down to a multiple of `size` (towards the past, also before 1970).
  package static func floor(_ value: Int64, _ size: Int64) -> Int64 {
    value >= 0 ? value / size * size : -((-value + size - 1) / size) * size
  }
}

extension Overview.Figures {
  /// The figures of `filter`'s range from an engine's `population` and `aggregate`, asked at once.
  public init(
    _ filter: ReportFilter,
    population: @escaping @Sendable (ReportFilter) async throws -> (devices: Int64, people: Int64),
    aggregate: @escaping @Sendable (ReportQuery) async throws -> [SQLRow]
  ) async throws {
    async let counted = population(filter)
    let events = try await aggregate(ReportQuery(filter, by: [], measuring: [.events, .sessions])).first
    let counters = try await aggregate(ReportQuery(filter, of: .counters, by: [], measuring: [.total])).first
    let (devices, people) = try await counted
    self.init(
      events: events?[.events] ?? 0, devices: devices, people: people, sessions: events?[.sessions] ?? 0,
      counters: counters?[.total] ?? 0)
  }
}
