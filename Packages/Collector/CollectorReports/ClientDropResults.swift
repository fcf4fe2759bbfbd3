public import CollectorStore

/// What devices reported dropping over a range: by service and reason, with the devices that did.
/// Served at `GET /v1/client-drops`, on the dashboard's quarantine page and by `trackerctl drops`.
public struct ClientDrops: ReportResult, Hashable {
  /// The app (write key's).
  public var app: String
  /// The range (ms since 1970; `to` exclusive), by when the collector received the reports.
  public var from: Int64
  public var to: Int64
  /// Events dropped, all reasons.
  public var total: Int64
  /// Devices that reported drops.
  public var devices: Int64
  /// Totals by service (empty: the tracker's own pipeline) and reason, largest first.
  public var drops: [ClientDropTotal]

  /// Creates a result.
  public init(app: String, from: Int64, to: Int64, devices: Int64, drops: [ClientDropTotal]) {
    self.app = app
    self.from = from
    self.to = to
    self.devices = devices
    self.drops = drops
    total = drops.reduce(0) { $0 &+ $1.count }
  }

  /// Reads the totals of `filter`'s app, range and app name from `store`.
  public static func load(from store: any ClientDropStore, _ filter: ReportFilter) async throws -> ClientDrops {
    async let drops = store.clientDrops(
      app: filter.storedApp, from: filter.from, to: filter.to, appName: filter.appName)
    async let devices = store.clientDropDevices(
      app: filter.storedApp, from: filter.from, to: filter.to, appName: filter.appName)
    return ClientDrops(
      app: filter.app, from: filter.from, to: filter.to, devices: try await devices, drops: try await drops)
  }

  /// One line: "3 devices reported 1,204 events dropped: disk_budget 1,100, consent 104".
  public var summary: String {
    guard total > 0 else { return "no device reported dropped events" }
    var byReason: [String: Int64] = [:]
    for drop in drops { byReason[drop.reason, default: 0] &+= drop.count }
    let reasons = byReason.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
      .map { "\($0.key) \(Self.grouped($0.value))" }
    let who = devices == 1 ? "1 device" : "\(Self.grouped(devices)) devices"
    return "\(who) reported \(Self.grouped(total)) events dropped: \(reasons.joined(separator: ", "))"
  }

  /// `1204` as `1,204`.
  static func grouped(_ number: Int64) -> String {
    let digits = String(number.magnitude)
    var text = ""
    for (index, digit) in digits.enumerated() {
      if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
      text.append(digit)
    }
    return number < 0 ? "-" + text : text
  }

  public var table: ReportTable {
    ReportTable(
      columns: ["service", "reason", "events", "devices"],
      rows: drops.map {
        [$0.service.isEmpty ? "(tracker)" : $0.service, $0.reason, String($0.count), String($0.devices)]
      })
  }
}
