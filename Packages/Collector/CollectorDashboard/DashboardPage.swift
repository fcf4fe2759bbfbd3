/// The dashboard's pages: each owns its path and title, so the server's dispatch and the navigation
/// cannot disagree.
public enum DashboardPage: String, CaseIterable, Sendable {
  case overview
  /// Events as they are stored, beside those refused and dropped: what a developer watches.
  case live
  case events
  /// Events matching any stored dimension, counted and listed (drill-downs open it too).
  case search
  case retention
  case breakdowns
  case funnel
  case counters
  case revenue
  /// The app's tracking plan against the events seen, and its violations.
  case plan
  /// The app's saved searches and reports.
  case saved
  /// One device's or person's properties and timeline (opened from their links, not the navigation).
  case profile
  /// Entries refused by the rules, kept for a replay.
  case quarantine
  /// The audit trail: admins only.
  case audit

  /// The page at `path` (`/` or `/dashboard/<name>`), or `nil`.
  public init?(path: String) {
    if path == "/" {
      self = .overview
      return
    }
    guard path.hasPrefix("/dashboard/"), let page = DashboardPage(rawValue: String(path.dropFirst(11))),
      page != .overview
    else { return nil }
    self = page
  }

  /// `/` for the overview, `/dashboard/<name>` for the others.
  public var path: String { self == .overview ? "/" : "/dashboard/\(rawValue)" }

  /// Whether the navigation lists the page (a profile needs a device or a user).
  public var isListed: Bool { self != .profile }

  /// The title in the navigation.
  public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}
