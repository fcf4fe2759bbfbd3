import Foundation

/// A report as a table: what CSV export, terminal tables and the dashboard's tables render.
public struct ReportTable: Sendable, Hashable {
  /// Column titles.
  public var columns: [String]
  /// Rows of cells, as text.
  public var rows: [[String]]

  /// A table.
  public init(columns: [String], rows: [[String]]) {
    self.columns = columns
    self.rows = rows
  }

  /// RFC 4180 CSV: a header line, then one line per row; cells with `,`, `"` or line breaks quoted.
  ///
  /// A cell a spreadsheet would evaluate as a formula (starting with `=`, `+`, `-`, `@`, a tab or a
  /// carriage return, OWASP's list) gets a leading `'` and is quoted, so an event named
  /// `=HYPERLINK(…)` is shown as text. Numbers the reports write themselves (`-3`, `12.5`) are kept.
  public var csv: String {
    ([columns] + rows).map { $0.map(Self.csvCell).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
  }

  /// One CSV cell: quoted when needed, neutralised when a spreadsheet would evaluate it.
  public static func csvCell(_ text: String) -> String {
    var text = text
    if let first = text.utf8.first,
      [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D].contains(first),
      Double(text) == nil
    {
      text = "'" + text
    }
    let quoted = text.first == "'" || text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
    guard quoted else { return text }
    return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }
}

/// Anything a report returns: JSON through `Codable`, CSV and tables through ``table``.
public protocol ReportResult: Sendable, Codable {
  /// The result as a table.
  var table: ReportTable { get }
}

/// Events, unique devices, unique people, sessions and counter increments in the range, and in the
/// range before.
public struct Overview: ReportResult, Hashable {
  /// Figures for the range and the range before it.
  public init(current: Figures, previous: Figures) {
    self.current = current
    self.previous = previous
  }

  /// The figures of one range.
  public struct Figures: Sendable, Hashable, Codable {
    /// Events.
    public var events: Int64
    /// Distinct devices.
    public var devices: Int64
    /// Distinct people: a device identified as a user counts as that user (its first one, by event
    /// time), with the user's other devices; a device never identified counts on its own.
    public var people: Int64
    /// Distinct sessions.
    public var sessions: Int64
    /// Counter increments (SimpleAnalytics' counters).
    public var counters: Int64

    /// Figures.
    public init(events: Int64, devices: Int64, people: Int64, sessions: Int64, counters: Int64) {
      self.events = events
      self.devices = devices
      self.people = people
      self.sessions = sessions
      self.counters = counters
    }
  }

  /// This range.
  public var current: Figures
  /// The range of the same length before it.
  public var previous: Figures

  public var table: ReportTable {
    func change(_ now: Int64, _ before: Int64) -> String {
      before == 0 ? "" : String(format: "%+.1f%%", Double(now - before) * 100 / Double(before))
    }
    return ReportTable(
      columns: ["figure", "value", "previous", "change"],
      rows: [
        ("events", current.events, previous.events), ("devices", current.devices, previous.devices),
        ("people", current.people, previous.people), ("sessions", current.sessions, previous.sessions),
        ("counters", current.counters, previous.counters),
      ].map { [$0.0, String($0.1), String($0.2), change($0.1, $0.2)] }
    )
  }
}

/// One name and how often and by how many devices it occurred (events, counters, parameter values).
public struct CountRow: Sendable, Hashable, Codable {
  /// One counted value: its count, distinct devices and share of the list's total (percent).
  public init(name: String, count: Int64, devices: Int64, share: Double) {
    self.name = name
    self.count = count
    self.devices = devices
    self.share = share
  }

  /// The event name, counter name or value.
  public var name: String
  /// Occurrences (or the counter total).
  public var count: Int64
  /// Distinct devices.
  public var devices: Int64
  /// Share of all occurrences in the report, in percent.
  public var share: Double
}

/// A list of ``CountRow``s: top events, breakdowns, counters, parameter values.
public struct CountList: ReportResult, Hashable {
  /// Counts of `dimension` (`event`, `platform`, a parameter's name).
  public init(dimension: String, rows: [CountRow]) {
    self.dimension = dimension
    self.rows = rows
  }

  /// What the names are (`event`, `platform`, `app version`, ...).
  public var dimension: String
  /// The rows, in the report's order.
  public var rows: [CountRow]

  public var table: ReportTable {
    ReportTable(
      columns: [dimension, "count", "devices", "share %"],
      rows: rows.map { [$0.name, String($0.count), String($0.devices), String(format: "%.1f", $0.share)] }
    )
  }
}

/// Counts per hour or per day, every bucket of the range present (zeros included).
public struct TimeSeries: ReportResult, Hashable {
  /// Every bucket of the range, for all events (`event` nil) or one.
  public init(bucket: ReportBucket, event: String?, points: [Point]) {
    self.bucket = bucket
    self.event = event
    self.points = points
  }

  /// One bucket.
  public struct Point: Sendable, Hashable, Codable {
    /// One bucket from `start` (ms since 1970).
    public init(start: Int64, count: Int64, devices: Int64) {
      self.start = start
      self.count = count
      self.devices = devices
    }

    /// The bucket's first millisecond (UTC).
    public var start: Int64
    /// Events.
    public var count: Int64
    /// Distinct devices.
    public var devices: Int64
  }

  /// `hour` or `day`.
  public var bucket: ReportBucket
  /// The event counted, or `nil` for all.
  public var event: String?
  /// The points, oldest first.
  public var points: [Point]

  public var table: ReportTable {
    ReportTable(
      columns: ["start", "count", "devices"],
      rows: points.map { [ReportTime.iso($0.start), String($0.count), String($0.devices)] }
    )
  }
}

/// A time bucket.
public enum ReportBucket: String, Sendable, Hashable, Codable, CaseIterable {
  /// One hour.
  case hour
  /// One day (UTC).
  case day
  /// Seven days from the start of the range (retention).
  case week

  /// Milliseconds in one bucket.
  public var milliseconds: Int64 {
    switch self {
    case .hour: 3_600_000
    case .day: 86_400_000
    case .week: 7 * 86_400_000
    }
  }
}

/// Daily, weekly and monthly active users at the end of the range, new against returning in it,
/// counted in ``unit`` (people or devices; the fields keep the report's first name).
public struct ActiveDevices: ReportResult, Hashable {
  /// What the figures count: people or devices.
  public var unit: ReportUnit
  /// Users active in the last day of the range.
  public var daily: Int64
  /// In the last 7 days.
  public var weekly: Int64
  /// In the last 30 days.
  public var monthly: Int64
  /// Users active in the range whose first event ever is in the range.
  public var new: Int64
  /// Users active in the range seen before it.
  public var returning: Int64

  /// The figures, counted in `unit`.
  public init(daily: Int64, weekly: Int64, monthly: Int64, new: Int64, returning: Int64, unit: ReportUnit = .person) {
    self.unit = unit
    self.daily = daily
    self.weekly = weekly
    self.monthly = monthly
    self.new = new
    self.returning = returning
  }

  public var table: ReportTable {
    ReportTable(
      columns: ["figure", unit.plural],
      rows: [
        ["DAU", String(daily)], ["WAU", String(weekly)], ["MAU", String(monthly)], ["new", String(new)],
        ["returning", String(returning)],
      ]
    )
  }
}
