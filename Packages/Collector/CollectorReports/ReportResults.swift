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

/// Events, unique devices, sessions and counter increments in the range, and in the range before.
public struct Overview: ReportResult, Hashable {
  /// The figures of one range.
  public struct Figures: Sendable, Hashable, Codable {
    /// Events.
    public var events: Int64
    /// Distinct devices.
    public var devices: Int64
    /// Distinct sessions.
    public var sessions: Int64
    /// Counter increments (SimpleAnalytics' counters).
    public var counters: Int64

    /// Figures.
    public init(events: Int64, devices: Int64, sessions: Int64, counters: Int64) {
      self.events = events
      self.devices = devices
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
        ("sessions", current.sessions, previous.sessions), ("counters", current.counters, previous.counters),
      ].map { [$0.0, String($0.1), String($0.2), change($0.1, $0.2)] }
    )
  }
}

/// One name and how often and by how many devices it occurred (events, counters, parameter values).
public struct CountRow: Sendable, Hashable, Codable {
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
  /// One bucket.
  public struct Point: Sendable, Hashable, Codable {
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

/// Daily, weekly and monthly active devices at the end of the range; new against returning in it.
public struct ActiveDevices: ReportResult, Hashable {
  /// Devices active in the last day of the range.
  public var daily: Int64
  /// In the last 7 days.
  public var weekly: Int64
  /// In the last 30 days.
  public var monthly: Int64
  /// Devices active in the range whose first event ever is in the range.
  public var new: Int64
  /// Devices active in the range seen before it.
  public var returning: Int64

  /// The figures.
  public init(daily: Int64, weekly: Int64, monthly: Int64, new: Int64, returning: Int64) {
    self.daily = daily
    self.weekly = weekly
    self.monthly = monthly
    self.new = new
    self.returning = returning
  }

  public var table: ReportTable {
    ReportTable(
      columns: ["figure", "devices"],
      rows: [
        ["DAU", String(daily)], ["WAU", String(weekly)], ["MAU", String(monthly)], ["new", String(new)],
        ["returning", String(returning)],
      ]
    )
  }
}

/// Cohorts by first-seen period and the share of each still active in each following period.
public struct Retention: ReportResult, Hashable {
  /// One cohort.
  public struct Cohort: Sendable, Hashable, Codable {
    /// The period's first millisecond.
    public var start: Int64
    /// The app version of the cohort's devices' first events, when split by version.
    public var appVersion: String?
    /// Devices first seen in the period.
    public var size: Int64
    /// Devices of the cohort active in period 0, 1, 2, ... (period 0 is the cohort itself).
    public var active: [Int64]
    /// `active` as shares of `size`, in percent.
    public var retained: [Double]
  }

  /// `day` or `week`.
  public var period: ReportBucket
  /// The cohorts, oldest first.
  public var cohorts: [Cohort]

  public var table: ReportTable {
    let width = cohorts.map(\.retained.count).max() ?? 0
    let split = cohorts.contains { $0.appVersion != nil }
    return ReportTable(
      columns: ["cohort"] + (split ? ["app version"] : []) + ["devices"]
        + (0..<width).map { "\(period.rawValue) \($0)" },
      rows: cohorts.map { cohort in
        [ReportTime.iso(cohort.start)] + (split ? [cohort.appVersion ?? ""] : []) + [String(cohort.size)]
          + cohort.retained.map { String(format: "%.1f", $0) }
      }
    )
  }
}

/// Ordered steps within a time window: devices reaching each step, conversion and drop-off.
public struct Funnel: ReportResult, Hashable {
  /// One step.
  public struct Step: Sendable, Hashable, Codable {
    /// The event name.
    public var name: String
    /// Devices that reached it (in order, within the window).
    public var devices: Int64
    /// Share of the first step's devices, in percent.
    public var conversion: Double
    /// Share of the previous step's devices lost at this step, in percent.
    public var dropOff: Double
  }

  /// The window, from the first step, in milliseconds.
  public var window: Int64
  /// The app version the funnel is restricted to when split, else `nil`.
  public var appVersion: String?
  /// The steps.
  public var steps: [Step]

  public var table: ReportTable {
    ReportTable(
      columns: ["step", "event", "devices", "conversion %", "drop-off %"],
      rows: steps.enumerated().map { index, step in
        [
          String(index + 1), step.name, String(step.devices), String(format: "%.1f", step.conversion),
          String(format: "%.1f", step.dropOff),
        ]
      }
    )
  }
}

/// Sessions in the range: how many, how long (median), how many events each.
public struct Sessions: ReportResult, Hashable {
  /// Distinct sessions.
  public var count: Int64
  /// The median time from a session's first to its last event, in milliseconds.
  public var medianDuration: Int64
  /// Events per session, on average.
  public var eventsPerSession: Double

  /// The figures.
  public init(count: Int64, medianDuration: Int64, eventsPerSession: Double) {
    self.count = count
    self.medianDuration = medianDuration
    self.eventsPerSession = eventsPerSession
  }

  public var table: ReportTable {
    ReportTable(
      columns: ["figure", "value"],
      rows: [
        ["sessions", String(count)], ["median duration s", String(format: "%.1f", Double(medianDuration) / 1000)],
        ["events per session", String(format: "%.2f", eventsPerSession)],
      ]
    )
  }
}

/// Detail rows of one event, newest first, a page at a time (keyset pagination).
public struct EventRows: ReportResult, Hashable {
  /// One event.
  public struct Row: Sendable, Hashable, Codable {
    /// When it happened (ms, UTC).
    public var occurredAt: Int64
    /// Its id.
    public var eventID: String
    /// Its name.
    public var name: String
    /// The device.
    public var deviceID: String
    /// The platform.
    public var platform: String
    /// The app version.
    public var appVersion: String
    /// The OS version.
    public var osVersion: String
    /// The parameters as JSON.
    public var parameters: String
  }

  /// The rows.
  public var rows: [Row]
  /// Pass as `after` for the next page; `nil` on the last page.
  public var next: String?

  public var table: ReportTable {
    ReportTable(
      columns: ["time", "event", "event id", "device", "platform", "app version", "os version", "parameters"],
      rows: rows.map {
        [
          ReportTime.iso($0.occurredAt), $0.name, $0.eventID, $0.deviceID, $0.platform, $0.appVersion, $0.osVersion,
          $0.parameters,
        ]
      }
    )
  }
}
