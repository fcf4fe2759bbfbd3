package import CollectorWire
import Foundation
import WireJSON

// Results that follow devices over time: retention, funnels, sessions, and the rows themselves.

/// Cohorts by first-seen period and the share of each still active in each following period, of
/// people or devices (``unit``); or, with ``events``, by the period of their first start event and
/// the share doing the return event in each following period.
public struct Retention: ReportResult, Hashable {
  /// Cohorts by `period`, of `unit`, counted with `events`.
  public init(period: ReportBucket, cohorts: [Cohort], unit: ReportUnit = .person, events: RetentionEvents = .any) {
    self.period = period
    self.cohorts = cohorts
    self.unit = unit
    self.events = events
  }

  /// One cohort.
  public struct Cohort: Sendable, Hashable, Codable {
    /// A cohort: people or devices active in each period from `start` (`active[0]` is its size).
    public init(start: Int64, appVersion: String?, size: Int64, active: [Int64], retained: [Double]) {
      self.start = start
      self.appVersion = appVersion
      self.size = size
      self.active = active
      self.retained = retained
    }

    /// The period's first millisecond.
    public var start: Int64
    /// The app version of the cohort's devices' first events, when split by version.
    public var appVersion: String?
    /// People or devices first seen in the period.
    public var size: Int64
    /// People or devices of the cohort active in period 0, 1, 2, ... (period 0 is the cohort itself).
    public var active: [Int64]
    /// `active` as shares of `size`, in percent.
    public var retained: [Double]
  }

  /// `day` or `week`.
  public var period: ReportBucket
  /// What the cohorts count: people or devices.
  public var unit: ReportUnit
  /// The events that start a cohort and that count as coming back (any event when not named).
  public var events: RetentionEvents
  /// The cohorts, oldest first.
  public var cohorts: [Cohort]

  public var table: ReportTable {
    let width = cohorts.map(\.retained.count).max() ?? 0
    let split = cohorts.contains { $0.appVersion != nil }
    return ReportTable(
      columns: ["cohort"] + (split ? ["app version"] : []) + [unit.plural]
        + (0..<width).map { "\(period.rawValue) \($0)" },
      rows: cohorts.map { cohort in
        [ReportTime.iso(cohort.start)] + (split ? [cohort.appVersion ?? ""] : []) + [String(cohort.size)]
          + cohort.retained.map { String(format: "%.1f", $0) }
      }
    )
  }
}

/// Ordered steps within a time window: people or devices (``unit``) reaching each step, conversion
/// and drop-off.
public struct Funnel: ReportResult, Hashable {
  /// A funnel of `unit` within `window` ms, over every app version (`appVersion` nil) or one.
  public init(window: Int64, appVersion: String?, steps: [Step], unit: ReportUnit = .person) {
    self.window = window
    self.appVersion = appVersion
    self.steps = steps
    self.unit = unit
  }

  /// One step.
  public struct Step: Sendable, Hashable, Codable {
    /// A step: devices that reached it, conversion from the first step and drop-off from the previous
    /// one (percent).
    public init(name: String, devices: Int64, conversion: Double, dropOff: Double) {
      self.name = name
      self.devices = devices
      self.conversion = conversion
      self.dropOff = dropOff
    }

    /// The event name.
    public var name: String
    /// People or devices (the funnel's ``Funnel/unit``) that reached it, in order, within the window.
    public var devices: Int64
    /// Share of the first step's devices, in percent.
    public var conversion: Double
    /// Share of the previous step's devices lost at this step, in percent.
    public var dropOff: Double
  }

  /// The window, from the first step, in milliseconds.
  public var window: Int64
  /// What the steps count: people (a person's steps on all of their devices form one path) or
  /// devices.
  public var unit: ReportUnit
  /// The app version the funnel is restricted to when split, else `nil`.
  public var appVersion: String?
  /// The steps.
  public var steps: [Step]

  public var table: ReportTable {
    ReportTable(
      columns: ["step", "event", unit.plural, "conversion %", "drop-off %"],
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

/// What a retention counts: a unit joins the cohort of the period of its first `start` event in the
/// range and counts in a later period when it does the `back` event in it; any event where one is
/// not named (the default: first seen, then active).
public struct RetentionEvents: Sendable, Hashable, Codable {
  /// The events: `nil` is any event.
  public init(start: String? = nil, back: String? = nil) {
    self.start = start
    self.back = back
  }

  /// Any event starts a cohort and counts as coming back.
  public static let any = RetentionEvents()

  /// The event whose first occurrence in the range puts a unit in its cohort; `nil`: any event.
  public var start: String?
  /// The event that counts a unit as back in a later period; `nil`: any event.
  public var back: String?

  /// Whether both are any event (the rollups can answer).
  public var isAny: Bool { start == nil && back == nil }

  /// The names in the order a query binds them (those named).
  package var names: [String] { Array(Set([start, back].compactMap { $0 })).sorted() }

  /// Checks the names (``ReportText``), naming the parameter.
  package func check() throws(FieldError) {
    if let start { try ReportText.checkName(start, field: "startEvent") }
    if let back { try ReportText.checkName(back, field: "returnEvent") }
  }
}
