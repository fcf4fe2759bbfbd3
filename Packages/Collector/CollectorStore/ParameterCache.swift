/// The parameter cache: for each built hour (``DeviceSetTables/hours``), name, (platform, app
/// version, OS version) and parameter key that any event of the row has, the events by the key's
/// value and device — the values as text (``SQLDialect/parameterEntries(_:)``, the text a report
/// reads with ``SQLDialect/parameterText(_:bind:)``), each (value, device, events) as three 32-bit
/// numbers (``ParameterCacheCoding``). The events of the row without the key are under the value
/// `(none)`, as the report names them.
///
/// A report of one event's values of one parameter over four weeks at 10M events reads 285,000
/// whole event rows for their JSON (1.1–1.4 s on SQLite); from the cache it reads one packed row
/// per hour and dimensions. A row with no entry for a key means that no event of the row had the
/// key: its events are all `(none)`, and the report counts them from the row's device set.
///
/// Built with the device sets, in the same transaction and under the same marks, and deleted with
/// them (``DeviceSetSQL/built``): any change to an hour's events deletes the hour's rows, and the
/// report reads that hour's events instead. Values live only in the rows of their hour, so an
/// erasure or pruning that deletes the hour's events deletes its values with them.
extension DeviceSetSQL {
  /// The `CREATE TABLE` of the parameter cache (``DeviceSetTables/parameters``), its values of type
  /// `text` and its entries of type `blob`, and the deletion of every mark, set and step row: each
  /// hour is built again, with its parameter rows.
  public func createParameters(text: String, blob: String) -> [String] {
    [
      """
      CREATE TABLE \(tables.parameters) (
        app TEXT NOT NULL, hour BIGINT NOT NULL, name TEXT NOT NULL, platform TEXT NOT NULL,
        app_version TEXT NOT NULL, os_version TEXT NOT NULL, key \(text) NOT NULL, vals \(text) NOT NULL,
        entries \(blob) NOT NULL,
        PRIMARY KEY (app, hour, name, key, platform, app_version, os_version)
      )
      """
    ] + [tables.hours, tables.sets, tables.totals, tables.steps].map { "DELETE FROM \($0)" }
  }

  /// The parameters of the events of app `1` in `[2, 3)` (ms) as a build reads them: name,
  /// platform, app version, OS version, the device's number, the time in ms, the event's id, and one parameter's
  /// key and value as text (``SQLDialect/parameterEntries(_:)``), a row per parameter; events
  /// without parameters are not read. A value of `NULL` (JSON `null`) is the report's `(none)`.
  public func parametersOfHours(events: String, dialect: any SQLDialect) -> String {
    let (app, from, to) = (dialect.placeholder(1), dialect.placeholder(2), dialect.placeholder(3))
    let each = dialect.parameterEntries(ofEventsAs: "e")
    return """
      SELECT e.name, e.platform, e.app_version, e.os_version, n.num, \(dialect.milliseconds("e.occurred_at")) AS t,
        e.event_id, \(each.key) AS k, \(each.value) AS v
      FROM \(events) e JOIN \(tables.numbers) n ON n.app = e.app AND n.device_id = e.device_id
      CROSS JOIN \(each.source)
      WHERE e.app = \(app) AND e.occurred_at >= \(dialect.time(from)) AND e.occurred_at < \(dialect.time(to))
      """
  }

  /// Whether the cache answers a report of parameter `key`: its path in SQLite's JSON lookup has no
  /// escapes (no `"` or `\`), so the key the cache found is the key the report looks up.
  public static func caches(key: String) -> Bool { !key.contains("\"") && !key.contains("\\") }
}

/// The rows of the parameter cache for the hours of one app's build: each device's events per row
/// (``addEvents(_:number:events:)``, from the names rollup) and the events' parameters
/// (``addParameter(_:number:event:key:value:)``, from ``DeviceSetSQL/parametersOfHours(events:dialect:)``).
///
/// ```swift
/// var build = ParameterCacheBuild()
/// let key = StepCacheBuild.Key(hour: 0, name: "purchase", platform: "iOS", appVersion: "1", osVersion: "18")
/// build.addEvents(key, number: 7, events: 2)
/// build.addParameter(key, number: 7, event: "e-1", key: "currency", value: "TRY")
/// build.finish()  // [(key, "currency", ["TRY", "(none)"], [0, 7, 1, 1, 7, 1])]
/// ```
public struct ParameterCacheBuild: Sendable {
  /// What a row of the cache is keyed by, beside its app.
  public struct Key: Sendable, Hashable {
    /// The hour, name and dimensions.
    public var row: StepCacheBuild.Key
    /// The parameter's key.
    public var key: String

    /// Equal when the rows are and the keys are the same bytes (``ExactText``).
    public static func == (lhs: Key, rhs: Key) -> Bool { lhs.row == rhs.row && lhs.key.hasSameBytes(as: rhs.key) }

    public func hash(into hasher: inout Hasher) {
      hasher.combine(row)
      hasher.combine(ExactText(key))
    }
  }

  /// One row being built: its values in the order met, and the events per (value, device).
  private struct Row {
    var values: [String] = []
    /// Values told apart by their bytes, as the databases group them (``ExactText``).
    var indexes: [ExactText: UInt32] = [:]
    var events: [Pair: UInt32] = [:]
    var keyed: [UInt32: UInt32] = [:]

    /// One event of device `number` with `value`.
    mutating func add(_ value: String, number: UInt32) {
      let key = ExactText(value)
      let index = indexes[key] ?? UInt32(values.count)
      if index == values.count {
        values.append(value)
        indexes[key] = index
      }
      events[Pair(value: index, number: number), default: 0] &+= 1
      keyed[number, default: 0] &+= 1
    }
  }

  private struct Pair: Hashable {
    var value: UInt32
    var number: UInt32
  }

  private var devices: [StepCacheBuild.Key: [UInt32: UInt32]] = [:]
  private var rows: [Key: Row] = [:]
  /// The event whose parameters are being read, and its keys so far (a key sent twice in one event
  /// counts once: the first, which SQLite's lookup finds).
  private var event: String?
  private var eventKeys: Set<ExactText> = []

  /// No events.
  public init() {}

  /// Adds `events` events of device `number` to row `row`.
  public mutating func addEvents(_ row: StepCacheBuild.Key, number: UInt32, events: Int64) {
    devices[row, default: [:]][number, default: 0] &+= UInt32(clamping: events)
  }

  /// Adds one parameter of an event of app `app` as a build reads it
  /// (``DeviceSetSQL/parametersOfHours(events:dialect:)``): its hour as the rollups key it, its
  /// device's number as a set holds it (a store error past 2^32 devices).
  public mutating func addParameter(
    name: String, platform: String, appVersion: String, osVersion: String, number: Int64, time: Int64,
    event: String, key: String, value: String?, app: String
  ) throws {
    let row = StepCacheBuild.Key(
      hour: RollupSQL.hour(of: time), name: name, platform: platform, appVersion: appVersion, osVersion: osVersion)
    addParameter(row, number: try DeviceSetCoding.number(number, app: app), event: event, key: key, value: value)
  }

  /// Adds one parameter of event `event` (its rows come together, as the build reads them); a
  /// `nil` value (JSON `null`) is left to `(none)`.
  public mutating func addParameter(
    _ row: StepCacheBuild.Key, number: UInt32, event: String, key: String, value: String?
  ) {
    if !(self.event?.hasSameBytes(as: event) ?? false) { (self.event, eventKeys) = (event, []) }
    guard let value, eventKeys.insert(ExactText(key)).inserted else { return }
    rows[Key(row: row, key: key), default: Row()].add(value, number: number)
  }

  /// The rows, once everything is added: each key, its values (`(none)` last when some events
  /// lack the key) and its entries, (value index, device number, events) per value and device.
  public func finish() -> [(key: Key, values: [String], entries: [UInt32])] {
    rows.map { key, row in
      var values = row.values
      var entries: [UInt32] = []
      entries.reserveCapacity(row.events.count * 3)
      for (pair, events) in row.events { entries += [pair.value, pair.number, events] }
      var none: [UInt32] = []
      for (number, events) in devices[key.row] ?? [:] where events > row.keyed[number] ?? 0 {
        none += [UInt32(values.count), number, events - (row.keyed[number] ?? 0)]
      }
      if !none.isEmpty {
        values.append(ParameterCacheCoding.none)
        entries += none
      }
      return (key, values, entries)
    }
  }
}

/// A parameter row's values as text: each value's length in UTF-8 bytes, a colon, then the value
/// (any character, colons included); its entries as ``StepCacheCoding`` packs numbers.
public enum ParameterCacheCoding {
  /// The value of events without the key, as reports name it.
  public static let none = "(none)"

  /// `values` as one text.
  public static func encode(_ values: [String]) -> String {
    values.map { "\($0.utf8.count):\($0)" }.joined()
  }

  /// The values of `text`; `nil` when it is not what ``encode(_:)`` writes.
  public static func decode(_ text: String) -> [String]? {
    var values: [String] = []
    var bytes = text.utf8[...]
    while !bytes.isEmpty {
      guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
        let length = Int(String(decoding: bytes[..<colon], as: UTF8.self)), length >= 0,
        let end = bytes.index(bytes.index(after: colon), offsetBy: length, limitedBy: bytes.endIndex)
      else { return nil }
      values.append(String(decoding: bytes[bytes.index(after: colon)..<end], as: UTF8.self))
      bytes = bytes[end...]
    }
    return values
  }
}
