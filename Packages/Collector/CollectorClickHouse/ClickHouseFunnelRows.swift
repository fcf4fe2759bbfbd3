import CollectorReports
import CollectorStore
import NIOCore

/// A funnel's units read as the server sends them, each walked as it arrives
/// (``PackedFunnelWalk``): rows in `Native` blocks (``UnitRowReader``), each a unit's 64-bit hash
/// (`UInt64`) and its step events (``FunnelRowFormat``).
///
/// Counting people, the server groups by device and the devices of people with two or more
/// (``owners``) are held until the answer ends, then walked as their person, all devices' events
/// together; every other device is its own unit (a person with one device reaches what it reaches).
///
/// A unit's rows come one after another (the server grouped or sorted by it): consecutive rows of
/// one hash are one unit's events. A block may be cut between two pieces of the answer: its bytes
/// wait in the reader until the rest comes. Only one block, one unit's events and the held people's
/// are kept, whatever the answer's size.
struct FunnelRows: Sendable {
  /// The walk, and how many units it counted at each step.
  private(set) var walk: PackedFunnelWalk
  /// The units `walk` could not order (two step events of different names in one millisecond), by
  /// hash, with their packed events: walked again with their ids.
  private(set) var tied: [UInt64: [Int64]] = [:]
  /// The person (their unit's hash) of each device (its hash) of a person with two or more devices.
  private let owners: OwnedDevices
  /// The events of those people's devices read so far, by person.
  private var held: [UInt64: [Int64]] = [:]
  private var reader: UnitRowReader
  /// The unit whose rows are being read, and its events so far.
  private var current: UInt64?
  private var events: [Int64] = []

  /// Reads rows of `format` for `walk`, walking the devices of `owners` as their person.
  init(walk: PackedFunnelWalk, format: FunnelRowFormat, owners: OwnedDevices = .none) {
    self.walk = walk
    self.owners = owners
    reader = UnitRowReader(format: format)
  }

  /// Takes the answer's next piece.
  mutating func take(_ piece: ByteBuffer) throws {
    reader.append(piece)
    while let row = try reader.next() {
      if row.unit != current {
        endUnit()
        current = row.unit
      }
      try reader.format.append(row, to: &events)
    }
  }

  /// The walk once the answer has ended, the held people walked (a row cut short is an error).
  func finished() throws -> WalkedFunnel {
    try reader.finished()
    var finished = self
    finished.endUnit()
    for (person, events) in finished.held {
      finished.events = events
      finished.walkEvents(of: person)
    }
    return WalkedFunnel(reached: finished.walk.reached, tied: finished.tied, owners: owners)
  }

  /// Ends the unit being read: its events held as its person's (a person with two or more devices),
  /// or walked.
  private mutating func endUnit() {
    guard let unit = current else { return }
    if let person = owners.person(of: unit) {
      held[person, default: []].append(contentsOf: events)
    } else {
      walkEvents(of: unit)
    }
    current = nil
    events.removeAll(keepingCapacity: true)
  }

  /// Walks ``events``, unit `unit`'s, or names the unit tied.
  private mutating func walkEvents(of unit: UInt64) {
    let walked = events.withUnsafeMutableBufferPointer { walk.walk($0) }
    if !walked { tied[unit] = events }
  }

  /// An answer that is not the rows asked for.
  struct Malformed: Error, CustomStringConvertible {
    let reason: String
    var description: String { "the funnel's rows are not unit hashes and packed events: \(reason)" }
  }
}

/// What a funnel's rows came to: how many units reached each step, and the units the packed walk
/// could not order (``PackedFunnelWalk/walk(_:)``), walked again with the ids of their tied events.
struct WalkedFunnel: Sendable {
  /// How many units reached each step.
  var reached: [Int64]
  /// The units with two step events of different names in one millisecond, by hash, and their
  /// packed events, sorted.
  var tied: [UInt64: [Int64]]
  /// The person (their unit's hash) of each device of a person with two or more devices.
  var owners: OwnedDevices

  /// The devices (hashes) of the tied `units`, and the person of each of them that has one (as
  /// ``Funnel/reached(_:persons:steps:window:parts:)`` maps devices, hashes written as text): a
  /// person's devices by ``owners``; any other unit is its device.
  func devices(of units: some Collection<UInt64>) -> (devices: [UInt64], persons: [ExactText: String]) {
    let wanted = Set(units)
    let ofPeople = owners.pairs.filter { wanted.contains($0.1) }
    let people = Set(ofPeople.map(\.1))
    let persons = Dictionary(uniqueKeysWithValues: ofPeople.map { (ExactText(String($0.0)), String($0.1)) })
    return (units.filter { !people.contains($0) } + ofPeople.map(\.0), persons)
  }
}
