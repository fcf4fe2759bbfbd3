/// A funnel's step events read as columns, no row kept: each event's device and name as an index
/// into the distinct values met, its time in ms since 1970, and its id (which orders events of one
/// millisecond) as a slice of one byte buffer.
///
/// A funnel reads hundreds of thousands of events; as ``SQLRow``s each would be an array and
/// two strings, about 250 bytes made and freed per event (at 1M events, a quarter of the funnel's
/// time went to the kernel handing the allocator fresh pages). Here the devices and names are
/// kept once each, and an event costs four array slots and its id's bytes.
///
/// ```swift
/// var columns = StepEventColumns()
/// var id = "e-01"
/// id.withUTF8 { columns.append(device: "phone", name: "view", time: 1_000, id: UnsafeRawBufferPointer($0)) }
/// columns.devices[Int(columns.device[0])]  // "phone"
/// ```
public struct StepEventColumns: Sendable, Equatable {
  /// The distinct devices, in the order first met.
  public private(set) var devices: [String] = []
  /// The distinct names, in the order first met.
  public private(set) var names: [String] = []
  /// Each event's device, an index into ``devices``.
  public private(set) var device: [Int32] = []
  /// Each event's name, an index into ``names``.
  public private(set) var name: [Int32] = []
  /// Each event's time in ms since 1970.
  public private(set) var time: [Int64] = []
  /// Every event's id, one after the other (UTF-8).
  private var idBytes: [UInt8] = []
  /// Where each event's id ends in ``idBytes`` (it starts where the one before ends).
  private var idEnds: [Int] = []
  /// Devices and names told apart by their bytes, as the databases group them (``ExactText``).
  private var deviceIndex: [ExactText: Int32] = [:]
  private var nameIndex: [ExactText: Int32] = [:]

  /// No events.
  public init() {}

  /// Rows of (`device_id`, `name`, `t`, `event_id`) as columns.
  public init(_ rows: [SQLRow]) {
    for row in rows {
      var id = row["event_id"].text ?? ""
      id.withUTF8 { bytes in
        append(
          device: row["device_id"].text ?? "", name: row["name"].text ?? "", time: row["t"].int ?? 0,
          id: UnsafeRawBufferPointer(bytes))
      }
    }
  }

  /// The number of events.
  public var count: Int { time.count }

  /// Adds one event; `id` is copied.
  public mutating func append(device: String, name: String, time: Int64, id: UnsafeRawBufferPointer) {
    self.device.append(Self.index(of: device, in: &devices, &deviceIndex))
    // Events read by name come in runs of one name: the last one is checked before the table.
    if let last = self.name.last, names[Int(last)].hasSameBytes(as: name) {
      self.name.append(last)
    } else {
      self.name.append(Self.index(of: name, in: &names, &nameIndex))
    }
    self.time.append(time)
    idBytes.append(contentsOf: id)
    idEnds.append(idBytes.count)
  }

  /// Makes room for `count` more events, each id of `idBytes` bytes, so that appending them copies
  /// nothing already read.
  public mutating func reserveCapacity(adding count: Int, idBytes: Int) {
    device.reserveCapacity(device.count + count)
    name.reserveCapacity(name.count + count)
    time.reserveCapacity(time.count + count)
    self.idBytes.reserveCapacity(self.idBytes.count + count * idBytes)
    idEnds.reserveCapacity(idEnds.count + count)
  }

  /// Adds the events of one step row of the cache, in bulk: their devices (indexes into ``devices``),
  /// their name, and from `packed` (device number, ms into `hour`, rank: ``StepCacheCoding``) their
  /// times and, as ids, their ranks (four bytes, most significant first). Appending each event's
  /// five values one by one cost a sixth of a 20-step funnel at 10M.
  mutating func appendRanked(devices: [Int32], name: Int32, hour: Int64, packed: [UInt32]) {
    let events = devices.count
    guard events > 0 else { return }
    device.append(contentsOf: devices)
    self.name.append(contentsOf: repeatElement(name, count: events))
    time.append(contentsOf: (0..<events).lazy.map { hour + Int64(Int32(bitPattern: packed[$0 * 3 + 1])) })
    let start = idBytes.count
    idBytes.append(contentsOf: repeatElement(0, count: events * 4))
    idBytes.withUnsafeMutableBufferPointer { bytes in
      for event in 0..<events {
        let (rank, at) = (packed[event * 3 + 2], start + event * 4)
        (bytes[at], bytes[at + 1]) = (UInt8(truncatingIfNeeded: rank >> 24), UInt8(truncatingIfNeeded: rank >> 16))
        (bytes[at + 2], bytes[at + 3]) = (UInt8(truncatingIfNeeded: rank >> 8), UInt8(truncatingIfNeeded: rank))
      }
    }
    idEnds.append(contentsOf: (1...events).lazy.map { start + $0 * 4 })
  }

  /// The index of `device` in ``devices``, added when new.
  mutating func index(ofDevice device: String) -> Int32 { Self.index(of: device, in: &devices, &deviceIndex) }

  /// The index of `name` in ``names``, added when new.
  mutating func index(ofName name: String) -> Int32 { Self.index(of: name, in: &names, &nameIndex) }

  /// Adds `other`'s events after these.
  public mutating func append(contentsOf other: StepEventColumns) {
    let devices = other.devices.map { Self.index(of: $0, in: &self.devices, &deviceIndex) }
    let names = other.names.map { Self.index(of: $0, in: &self.names, &nameIndex) }
    device.append(contentsOf: other.device.lazy.map { devices[Int($0)] })
    name.append(contentsOf: other.name.lazy.map { names[Int($0)] })
    time.append(contentsOf: other.time)
    let offset = idBytes.count
    idBytes.append(contentsOf: other.idBytes)
    idEnds.append(contentsOf: other.idEnds.lazy.map { $0 + offset })
  }

  /// Calls `body` with the events' ids in a form that compares them without copying anything
  /// (``IDOrder``): a sort of millions of events compares ids through it (a method on the columns
  /// themselves copied the columns, nine references retained and released, at every comparison).
  public func withIDOrder<Result>(_ body: (IDOrder) throws -> Result) rethrows -> Result {
    try idBytes.withUnsafeBufferPointer { bytes in
      try idEnds.withUnsafeBufferPointer { ends in try body(IDOrder(bytes: bytes, ends: ends)) }
    }
  }

  /// The events' ids, valid inside ``withIDOrder(_:)`` only.
  public struct IDOrder {
    fileprivate let bytes: UnsafeBufferPointer<UInt8>
    fileprivate let ends: UnsafeBufferPointer<Int>

    /// Whether event `one`'s id sorts before event `other`'s (byte by byte, as the databases
    /// compare text).
    public func precedes(_ one: Int, _ other: Int) -> Bool {
      let first = UnsafeBufferPointer(rebasing: bytes[(one == 0 ? 0 : ends[one - 1])..<ends[one]])
      let second = UnsafeBufferPointer(rebasing: bytes[(other == 0 ? 0 : ends[other - 1])..<ends[other]])
      return first.lexicographicallyPrecedes(second)
    }
  }

  /// The same events in the same order (the distinct values may be numbered differently).
  public static func == (lhs: StepEventColumns, rhs: StepEventColumns) -> Bool {
    lhs.count == rhs.count
      && (0..<lhs.count).allSatisfy { event in
        lhs.devices[Int(lhs.device[event])].hasSameBytes(as: rhs.devices[Int(rhs.device[event])])
          && lhs.names[Int(lhs.name[event])].hasSameBytes(as: rhs.names[Int(rhs.name[event])])
          && lhs.time[event] == rhs.time[event]
          && lhs.id(event) == rhs.id(event)
      }
  }

  /// Event `event`'s id bytes.
  private func id(_ event: Int) -> ArraySlice<UInt8> {
    idBytes[(event == 0 ? 0 : idEnds[event - 1])..<idEnds[event]]
  }

  private static func index(of value: String, in values: inout [String], _ index: inout [ExactText: Int32]) -> Int32 {
    let key = ExactText(value)
    if let known = index[key] { return known }
    let added = Int32(values.count)
    values.append(value)
    index[key] = added
    return added
  }
}
