/// The funnel's step cache: for each built hour (``DeviceSetTables/hours``), name and (platform,
/// app version, OS version), every event of that name as three numbers — its device's number
/// (``DeviceSetTables/numbers``), its time in ms from the start of the hour, and its rank among the
/// app's events of the same millisecond in the order of their ids — packed in one blob per row
/// (``StepCacheCoding``).
///
/// A funnel over four weeks at 10M events reads 3.3M step events; from the events' index that is
/// 3.3M index rows (1.7–9.8 s on the SQL stores), from the cache 11,803 rows of packed
/// numbers. The rank keeps the walk's order exact: events of one millisecond are ordered by their
/// ids, across every device of a person, as ``StepEventColumns/IDOrder/precedes(_:_:)`` orders them.
///
/// The cache is built with the device sets, in the same transaction and under the same marks, and
/// is deleted with them (``DeviceSetSQL/built``): any change to an hour's events (a late or resent
/// event, an erasure, pruning, a rebuild) deletes the hour's step rows, and the funnel reads that
/// hour's events instead.
extension DeviceSetSQL {
  /// The `CREATE TABLE` of the step cache (``DeviceSetTables/steps``), its events of type `blob`,
  /// and the deletion of every mark and set: each hour is built again, with its step rows.
  public func createSteps(blob: String) -> [String] {
    [
      """
      CREATE TABLE \(tables.steps) (
        app TEXT NOT NULL, hour BIGINT NOT NULL, name TEXT NOT NULL, platform TEXT NOT NULL,
        app_version TEXT NOT NULL, os_version TEXT NOT NULL, events \(blob) NOT NULL,
        PRIMARY KEY (app, hour, name, platform, app_version, os_version)
      )
      """
    ] + [tables.hours, tables.sets, tables.totals].map { "DELETE FROM \($0)" }
  }

  /// The events of app `1` in `[2, 3)` (ms) as a build reads them: name, platform, app version, OS
  /// version, the device's number (`num`, every device of a built hour has one), time in ms (`t`)
  /// and id, in the order of their times (`events` is the events table; `dialect` writes the
  /// placeholders and times).
  public func stepEventsOfHours(events: String, dialect: any SQLDialect) -> String {
    let (app, from, to) = (dialect.placeholder(1), dialect.placeholder(2), dialect.placeholder(3))
    return """
      SELECT e.name, e.platform, e.app_version, e.os_version, n.num, \(dialect.milliseconds("e.occurred_at")) AS t,
        e.event_id
      FROM \(events) e JOIN \(tables.numbers) n ON n.app = e.app AND n.device_id = e.device_id
      WHERE e.app = \(app) AND e.occurred_at >= \(dialect.time(from)) AND e.occurred_at < \(dialect.time(to))
      ORDER BY e.occurred_at
      """
  }
}

/// The rows of the step cache for the events of one app, given in the order of their times
/// (``DeviceSetSQL/stepEventsOfHours(events:dialect:)``): each event's rank among those of its
/// millisecond is found here, from the bytes of their ids.
///
/// ```swift
/// var build = StepCacheBuild()
/// build.add(StepCacheBuild.Key(hour: 0, name: "view", platform: "iOS", appVersion: "1", osVersion: "18"),
///           number: 7, time: 1_000, id: Array("e-1".utf8))
/// build.finish()  // [(key, [7, 1_000, 0])]
/// ```
public struct StepCacheBuild: Sendable {
  /// What a row of the cache is keyed by, beside its app.
  public struct Key: Sendable, Hashable {
    /// The hour (ms since 1970, as the rollups key it).
    public var hour: Int64
    /// The event's name.
    public var name: String
    /// The event's platform.
    public var platform: String
    /// The event's app version.
    public var appVersion: String
    /// The event's OS version.
    public var osVersion: String

    /// A key.
    public init(hour: Int64, name: String, platform: String, appVersion: String, osVersion: String) {
      (self.hour, self.name, self.platform) = (hour, name, platform)
      (self.appVersion, self.osVersion) = (appVersion, osVersion)
    }

    /// Equal when the hours are and every text is the same bytes (``ExactText``), as the tables key
    /// their rows: two names equal only as Swift strings are two rows.
    public static func == (lhs: Key, rhs: Key) -> Bool {
      lhs.hour == rhs.hour && lhs.name.hasSameBytes(as: rhs.name) && lhs.platform.hasSameBytes(as: rhs.platform)
        && lhs.appVersion.hasSameBytes(as: rhs.appVersion) && lhs.osVersion.hasSameBytes(as: rhs.osVersion)
    }

    public func hash(into hasher: inout Hasher) {
      hasher.combine(hour)
      for text in [name, platform, appVersion, osVersion] { hasher.combine(ExactText(text)) }
    }
  }

  /// The events of the millisecond being read, not ranked yet.
  private var tied: [(key: Key, number: UInt32, id: [UInt8])] = []
  private var tiedTime: Int64?
  /// Each row's numbers so far: (device number, ms into the hour, rank) per event.
  private var numbers: [Key: [UInt32]] = [:]

  /// No events.
  public init() {}

  /// Adds one event of app `app` as a build reads it (``DeviceSetSQL/stepEventsOfHours(events:dialect:)``):
  /// its hour as the rollups key it, its device's number as a set holds it (a store error past 2^32
  /// devices, ``DeviceSetCoding/number(_:app:)``).
  public mutating func add(
    name: String, platform: String, appVersion: String, osVersion: String, number: Int64, time: Int64, id: String,
    app: String
  ) throws {
    let key = Key(
      hour: RollupSQL.hour(of: time), name: name, platform: platform, appVersion: appVersion, osVersion: osVersion)
    add(key, number: try DeviceSetCoding.number(number, app: app), time: time, id: Array(id.utf8))
  }

  /// Adds one event; events come in the order of their times.
  public mutating func add(_ key: Key, number: UInt32, time: Int64, id: [UInt8]) {
    if time != tiedTime { rankTied() }
    tiedTime = time
    tied.append((key, number, id))
  }

  /// The rows, once every event is added: each key and its numbers, three per event.
  public mutating func finish() -> [(key: Key, numbers: [UInt32])] {
    rankTied()
    return numbers.map { ($0.key, $0.value) }
  }

  /// Ranks the events of the last millisecond by their ids and adds them to their rows.
  private mutating func rankTied() {
    guard let time = tiedTime else { return }
    if tied.count > 1 { tied.sort { $0.id.lexicographicallyPrecedes($1.id) } }
    for (rank, event) in tied.enumerated() {
      // Within ±2^31 ms of its hour: the bit pattern of a 32-bit offset (negative before 1970).
      let offset = UInt32(bitPattern: Int32(truncatingIfNeeded: time - event.key.hour))
      numbers[event.key, default: []].append(contentsOf: [event.number, offset, UInt32(truncatingIfNeeded: rank)])
    }
    tied.removeAll(keepingCapacity: true)
    tiedTime = nil
  }
}

/// A step row's events as bytes: three 32-bit numbers per event (device number, ms into the hour,
/// rank), least significant byte first — the layout ``DeviceSetCoding/decode(_:into:)`` reads, so
/// a store's device-set reader returns a step row's numbers as they are.
public enum StepCacheCoding {
  /// The bytes of `numbers`, in their order.
  public static func encode(_ numbers: [UInt32]) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(numbers.count * 4)
    for number in numbers { withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) } }
    return bytes
  }
}

/// The device ids of an app's device numbers, for step events read from the cache
/// (``StepEventColumns/appendCached(_:name:hour:devices:)``).
public struct NumberedDevices: Sendable {
  /// Each number's device id, `nil` where none is known.
  fileprivate var ids: [String?]
  /// Each number's index in the columns' devices, -1 until met.
  fileprivate var indexes: [Int32]

  /// The devices of rows of (`num`, `device_id`).
  public init(_ rows: [SQLRow]) {
    var ids: [String?] = []
    for row in rows {
      guard let number = row["num"].int, let id = row["device_id"].text, number >= 0, number < 1 << 32 else { continue }
      if Int(number) >= ids.count { ids += Array(repeating: nil, count: Int(number) - ids.count + 1) }
      ids[Int(number)] = id
    }
    self.ids = ids
    indexes = Array(repeating: -1, count: ids.count)
  }

  /// Number `number`'s device id; a number erased since (read beside a concurrent erasure) is a
  /// device of its own.
  fileprivate func id(of number: UInt32) -> String {
    Int(number) < ids.count ? ids[Int(number)] ?? "#\(number)" : "#\(number)"
  }
}

extension StepEventColumns {
  /// Adds the events of one step row of hour `hour` named `name` (its numbers as
  /// ``StepCacheCoding`` packs them), their devices by `devices`. An event's id is its rank, four
  /// bytes most significant first: events of one millisecond all come from one hour, so ranks are
  /// only ever compared with ranks.
  public mutating func appendCached(_ numbers: [UInt32], name: String, hour: Int64, devices: inout NumberedDevices) {
    let events = numbers.count / 3
    let nameIndex = index(ofName: name)
    var rowDevices = [Int32](repeating: 0, count: events)
    for event in 0..<events {
      let number = numbers[event * 3]
      let known = Int(number) < devices.indexes.count ? devices.indexes[Int(number)] : -1
      let device = known >= 0 ? known : index(ofDevice: devices.id(of: number))
      if known < 0, Int(number) < devices.indexes.count { devices.indexes[Int(number)] = device }
      rowDevices[event] = device
    }
    appendRanked(devices: rowDevices, name: nameIndex, hour: hour, packed: numbers)
  }
}
