import NIOCore

/// Each identified device's first person, by hashes, from the device-to-person rows as stored
/// (`RowBinary` rows of a device's hash, its person's and the millisecond they were first seen
/// together): a device's person is that of its earliest row, as
/// ``ClickHouseSchema/personOfDevice(app:key:among:)`` picks it. Rows of one device in one
/// millisecond with different people are ordered by their event ids, which these rows do not carry:
/// such a device is named tied (``firsts()``), for the server to pick.
///
/// The server reads the rows in 25–40 ms at 100M events, where its own grouping (`argMin` by time
/// and event id) took 0.21–0.32 s; the rows are picked here by sorting them, not in a dictionary
/// (`Docs/Benchmarks.md`).
struct FirstPersons: Sendable {
  private var rows: [(device: UInt64, person: UInt64, at: Int64)] = []
  private var pending = ByteBuffer()

  /// Takes the answer's next piece.
  mutating func take(_ piece: ByteBuffer) {
    var piece = piece
    pending.writeBuffer(&piece)
    while pending.readableBytes >= 24, let device = pending.readInteger(endianness: .little, as: UInt64.self),
      let person = pending.readInteger(endianness: .little, as: UInt64.self),
      let at = pending.readInteger(endianness: .little, as: Int64.self)
    {
      rows.append((device, person, at))
    }
    pending.discardReadBytes()
  }

  /// The rows once the answer has ended (a row cut short is an error).
  func finished() throws -> Self {
    guard pending.readableBytes == 0 else { throw FunnelRows.Malformed(reason: "a device's person is cut short") }
    return self
  }

  /// Each device's person (that of its earliest row), sorted by device, and the devices whose
  /// earliest millisecond has rows of two or more people (their person here is one of those).
  func firsts() -> (firsts: [(device: UInt64, person: UInt64)], tied: [UInt64]) {
    let sorted = rows.sorted { ($0.device, $0.at) < ($1.device, $1.at) }
    var (firsts, tied) = ([(device: UInt64, person: UInt64)](), [UInt64]())
    firsts.reserveCapacity(sorted.count)
    var index = 0
    while index < sorted.count {
      let first = sorted[index]
      var isTied = false
      index += 1
      while index < sorted.count, sorted[index].device == first.device {
        isTied = isTied || (sorted[index].at == first.at && sorted[index].person != first.person)
        index += 1
      }
      firsts.append((first.device, first.person))
      if isTied { tied.append(first.device) }
    }
    return (firsts, tied)
  }
}

/// The devices of people with two or more devices, each with its person (hashes), sorted by
/// device: the devices a funnel counting people walks as their person (a person with one device
/// reaches what that device reaches). Looked up by merging with units sorted the same way, or by
/// binary search, not hashed: with dictionaries (a lookup a row, and the counting of each person's
/// devices) the 3-step funnel by person at 100M events spent 15% of its samples in them.
struct OwnedDevices: Sendable {
  /// The devices' hashes, ascending.
  private(set) var devices: [UInt64] = []
  /// The person of each of ``devices``, at the same place.
  private(set) var persons: [UInt64] = []

  /// No device owned (counting devices).
  static let none = OwnedDevices()

  private init() {}

  /// The devices of `firsts` (every identified device's person) whose person has two or more.
  init(firsts: [(device: UInt64, person: UInt64)]) {
    let byPerson = firsts.sorted { $0.person < $1.person }
    var owned: [(device: UInt64, person: UInt64)] = []
    var start = 0
    while start < byPerson.count {
      var end = start + 1
      while end < byPerson.count, byPerson[end].person == byPerson[start].person { end += 1 }
      if end - start > 1 { owned += byPerson[start..<end] }
      start = end
    }
    owned.sort { $0.device < $1.device }
    (devices, persons) = (owned.map(\.device), owned.map(\.person))
  }

  var isEmpty: Bool { devices.isEmpty }

  /// Every owned device and its person.
  var pairs: Zip2Sequence<[UInt64], [UInt64]> { zip(devices, persons) }

  /// The place of the first owned device at or after `device` (``devices``' count when none is).
  func start(atLeast device: UInt64) -> Int {
    var (low, high) = (0, devices.count)
    while low < high {
      let middle = (low + high) / 2
      if devices[middle] < device { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// The person of `device`, if it is owned.
  func person(of device: UInt64) -> UInt64? {
    let place = start(atLeast: device)
    return place < devices.count && devices[place] == device ? persons[place] : nil
  }
}
