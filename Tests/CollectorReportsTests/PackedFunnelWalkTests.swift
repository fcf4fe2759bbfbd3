import CollectorReports
import CollectorStore
import NIOCore
import TestSupport
import Testing

@testable import CollectorClickHouse

/// ClickHouse's funnel rows (a unit's hash and its step events packed, `RowBinary`) read in pieces
/// cut anywhere and walked unit by unit: the counts equal the walk over the same events as
/// ``FunnelEvent``s, and only units with two step events of different names in one millisecond are
/// left for their rows.
@Suite("A funnel's packed step events")
struct PackedFunnelWalkTests {
  static let steps = ["view", "cart", "view", "buy"]
  static let window: Int64 = 600_000

  /// Seeded random units of 0–12 step events over four names (one in no step), in minutes and
  /// seconds with repeats, so that some share a millisecond; returned as (hash, events by time).
  static func units(seed: UInt64) -> [(hash: UInt64, events: [(name: String, time: Int64)])] {
    var random = SeededRandom(seed: seed)
    let names = ["view", "cart", "buy", "open"]
    return (0..<300).map { unit in
      let events = (0..<Int.random(in: 0...12, using: &random)).map { _ in
        (
          name: names[Int.random(in: 0..<4, using: &random)],
          time: Int64(Int.random(in: 0..<40, using: &random)) * 30_000
        )
      }
      return (hash: UInt64(unit) &* 0x9E37_79B9_7F4A_7C15, events: events)
    }
  }

  /// The range the units' events fall in (ms).
  static let span: Int64 = 40 * 30_000
  /// The three ways rows hold events: packed, a name's times in 4 bytes, in 8.
  static let formats: [FunnelRowFormat] = [
    .packed(names: 4, span: span), .named(names: 4, span: span), .named(names: 4, span: 1 << 33),
  ]

  /// `units` as the server sends them, for `walk`'s names, in `format`: a named row for each name of
  /// a unit's row, its times sorted.
  static func rowBinary(
    _ units: [(hash: UInt64, events: [(name: String, time: Int64)])], names: [String],
    format: FunnelRowFormat = formats[0]
  ) -> ByteBuffer {
    var buffer = ByteBuffer()
    func write(_ hash: UInt64, place: Int64?, _ values: [Int64]) {
      buffer.writeInteger(hash, endianness: .little)
      if let place { buffer.writeInteger(UInt8(place)) }
      var length = values.count
      repeat {
        buffer.writeInteger(UInt8(length & 0x7F) | (length > 0x7F ? 0x80 : 0))
        length >>= 7
      } while length > 0
      for value in values {
        if format.eventBytes == 4 {
          buffer.writeInteger(UInt32(value), endianness: .little)
        } else {
          buffer.writeInteger(value, endianness: .little)
        }
      }
    }
    for unit in units {
      let placed = unit.events.map { (place: Int64(names.firstIndex(of: $0.name) ?? 0), time: $0.time) }
      guard format.kind != .packed else {
        write(unit.hash, place: nil, placed.map { $0.time << PackedFunnelWalk.nameBits | $0.place })
        continue
      }
      for (place, events) in Dictionary(grouping: placed, by: \.place).sorted(by: { $0.key < $1.key }) {
        write(unit.hash, place: place, events.map(\.time).sorted())
      }
    }
    return buffer
  }

  /// `answer` (rows of `format`) read in pieces of `piece` bytes, one unit after another
  /// (``FunnelRows``) or gathered in any order (``GatheredFunnelRows``).
  static func read(
    _ answer: ByteBuffer, format: FunnelRowFormat = formats[0], piece: Int = 1 << 20, gathered: Bool,
    owners: [UInt64: UInt64] = [:]
  ) async throws -> WalkedFunnel? {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    var streamed = FunnelRows(walk: walk, format: format, owners: owners)
    var gathering = GatheredFunnelRows(walk: walk, format: format, most: 1 << 20)
    var start = 0
    while start < answer.readableBytes {
      let length = min(piece, answer.readableBytes - start)
      let slice = answer.getSlice(at: start, length: length) ?? ByteBuffer()
      try gathered ? gathering.take(slice) : streamed.take(slice)
      start += length
    }
    return gathered ? try await gathering.finished(owners: owners) : try streamed.finished()
  }

  @Test(arguments: [1, 3, 8, 17, 1_000_000], [UInt64(1), 2, 3])
  func piecesCutAnywhereWalkAsTheRows(piece: Int, seed: UInt64) async throws {
    for format in Self.formats { try await Self.piecesCutAnywhereWalkAsTheRows(piece: piece, seed: seed, format) }
  }

  static func piecesCutAnywhereWalkAsTheRows(piece: Int, seed: UInt64, _ format: FunnelRowFormat) async throws {
    let units = Self.units(seed: seed)
    let names = PackedFunnelWalk(steps: Self.steps, window: Self.window).names
    // Tied: two events of different names in one millisecond.
    let tied = units.filter { unit in
      Dictionary(grouping: unit.events, by: \.time).values.contains { Set($0.map(\.name)).count > 1 }
    }
    #expect(!tied.isEmpty && tied.count < units.count)
    let walked = units.filter { unit in !tied.contains { $0.hash == unit.hash } }.flatMap { unit in
      unit.events.sorted { $0.time < $1.time }.map { (unit: String(unit.hash), name: $0.name, time: $0.time) }
    }
    let expected = Funnel.reached(walked, steps: Self.steps, window: Self.window)
    #expect(expected[0] > 0 && expected[3] > 0)
    for gathered in [false, true] {
      let answer = Self.rowBinary(units, names: names, format: format)
      let read = try #require(try await Self.read(answer, format: format, piece: piece, gathered: gathered))
      #expect(Set(read.tied.keys) == Set(tied.map(\.hash)))
      #expect(read.reached == expected)
    }
  }

  /// A unit's events in several rows (the closed days' rows: one per step name and device, and
  /// the rest of the range's) are its events, whether its rows come one after another (sorted by
  /// device) or anywhere (gathered); and the devices of people with two or more devices (the last
  /// row's among them) are walked as their person.
  @Test(arguments: [UInt64(1), 2, 3], [false, true])
  func aUnitsRowsAreOneUnitAndPeopleAreWalkedTogether(seed: UInt64, gathered: Bool) async throws {
    for format in Self.formats { try await Self.peopleWalkedTogether(seed: seed, gathered: gathered, format) }
  }

  static func peopleWalkedTogether(seed: UInt64, gathered: Bool, _ format: FunnelRowFormat) async throws {
    var random = SeededRandom(seed: seed)
    let units = Self.units(seed: seed).filter { unit in
      Dictionary(grouping: unit.events, by: \.time).values.allSatisfy { Set($0.map(\.name)).count == 1 }
    }
    // Every third device is a person's, two devices a person; the last device among them.
    let owners = Dictionary(
      uniqueKeysWithValues: units.indices.reversed().filter { $0 % 3 == (units.count - 1) % 3 }.map {
        (units[$0].hash, UInt64.max - UInt64($0 / 6))
      })
    #expect(owners[units[units.count - 1].hash] != nil)
    var split = units.flatMap { unit in
      stride(from: 0, to: max(1, unit.events.count), by: 2).map {
        (hash: unit.hash, events: Array(unit.events[$0..<min(unit.events.count, $0 + 2)]))
      }
    }
    if gathered { split.shuffle(using: &random) }
    let names = PackedFunnelWalk(steps: Self.steps, window: Self.window).names
    let read = try #require(
      try await Self.read(
        Self.rowBinary(split, names: names, format: format), format: format, gathered: gathered, owners: owners))
    // Each unit (a person's hash, or a device's) and its events; a person whose two devices sent
    // different names in one millisecond is tied.
    let byUnit = Dictionary(grouping: units) { owners[$0.hash] ?? $0.hash }.mapValues { $0.flatMap(\.events) }
    let tied = byUnit.filter { _, events in
      Dictionary(grouping: events, by: \.time).values.contains { Set($0.map(\.name)).count > 1 }
    }
    #expect(Set(read.tied.keys) == Set(tied.keys))
    let walked = byUnit.filter { tied[$0.key] == nil }.flatMap { unit, events in
      events.map { (unit: String(unit), name: $0.name, time: $0.time) }
    }.sorted { ($0.unit, $0.time) < ($1.unit, $1.time) }
    #expect(read.reached == Funnel.reached(walked, steps: Self.steps, window: Self.window))
  }

  /// Gathering stops past its most events and answers nothing, so the funnel reads its rows sorted.
  @Test(arguments: [0, 5, 1_000_000])
  func gatheringPastItsMostAnswersNothing(most: Int) async throws {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    let units = Self.units(seed: 1)
    let events = units.map(\.events.count).reduce(0, +)
    var rows = GatheredFunnelRows(walk: walk, format: Self.formats[0], most: most)
    try rows.take(Self.rowBinary(units, names: walk.names))
    let walked = try await rows.finished(owners: [:])
    #expect((walked == nil) == (events > most))
  }

  @Test func aRowCutShortOrANameOutOfPlaceIsAnError() throws {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    var rows = FunnelRows(walk: walk, format: Self.formats[0])
    let answer = Self.rowBinary(
      [(hash: 7, events: [(name: "view", time: 0), (name: "buy", time: 1)])], names: walk.names)
    try rows.take(answer.getSlice(at: 0, length: answer.readableBytes - 1) ?? ByteBuffer())
    #expect(throws: FunnelRows.Malformed.self) { try rows.finished() }
    var outOfPlace = ByteBuffer()
    outOfPlace.writeInteger(UInt64(7), endianness: .little)
    outOfPlace.writeInteger(UInt8(1))
    outOfPlace.writeInteger(Int64(walk.names.count), endianness: .little)
    var other = FunnelRows(walk: walk, format: Self.formats[0])
    #expect(throws: FunnelRows.Malformed.self) { try other.take(outOfPlace) }
  }

  /// Gathered rows are checked when they are walked: a name out of place fails the answer.
  @Test func aGatheredNameOutOfPlaceFailsTheAnswer() async throws {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    var outOfPlace = ByteBuffer()
    outOfPlace.writeInteger(UInt64(7), endianness: .little)
    outOfPlace.writeInteger(UInt8(1))
    outOfPlace.writeInteger(Int64(walk.names.count), endianness: .little)
    var rows = GatheredFunnelRows(walk: walk, format: Self.formats[0], most: 1 << 20)
    try rows.take(outOfPlace)
    await #expect(throws: StoreError.self) { _ = try await rows.finished(owners: [:]) }
  }

  /// A named row out of its range or of a name out of place is an error, whether streamed or gathered.
  @Test(arguments: [
    (format: formats[1], place: 1, time: span), (format: formats[1], place: 4, time: 0),
    (format: formats[2], place: 1, time: 1 << 33), (format: formats[2], place: 1, time: -1),
    (format: formats[2], place: 200, time: 0),
  ])
  func aNamedRowOutOfItsRangeIsAnError(format: FunnelRowFormat, place: Int, time: Int64) async throws {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    var row = ByteBuffer()
    row.writeInteger(UInt64(7), endianness: .little)
    row.writeInteger(UInt8(place))
    row.writeInteger(UInt8(1))
    if format.eventBytes == 4 {
      row.writeInteger(UInt32(time), endianness: .little)
    } else {
      row.writeInteger(time, endianness: .little)
    }
    var streamed = FunnelRows(walk: walk, format: format)
    #expect(throws: FunnelRows.Malformed.self) { try streamed.take(row) }
    var gathered = GatheredFunnelRows(walk: walk, format: format, most: 1 << 20)
    try gathered.take(row)
    await #expect(throws: StoreError.self) { _ = try await gathered.finished(owners: [:]) }
  }

  /// A unit's sorted runs (its rows as the server sends them) merged are its events sorted; a run
  /// out of order is said, and the runs are then left one after another for the walk to sort.
  @Test(arguments: [UInt64(1), 2, 3, 4, 5])
  func sortedRunsMergeToTheEventsSorted(seed: UInt64) {
    var random = SeededRandom(seed: seed)
    let runs = (0..<Int.random(in: 1...6, using: &random)).map { _ in
      (0..<Int.random(in: 0...40, using: &random)).map { _ in Int64.random(in: 0...200, using: &random) }.sorted()
    }
    var (events, places, merged, scratch) = ([Int64](), [Range<Int>](), [Int64](), [Int64]())
    for run in runs {
      places.append(events.count..<events.count + run.count)
      events += run
    }
    #expect(events.withUnsafeBufferPointer { PackedFunnelWalk.merge(places, of: $0, into: &merged, scratch: &scratch) })
    #expect(merged == events.sorted())
    guard let long = places.first(where: { $0.count > 1 && events[$0.lowerBound] != events[$0.upperBound - 1] })
    else { return }
    events.swapAt(long.lowerBound, long.upperBound - 1)
    #expect(
      !events.withUnsafeBufferPointer { PackedFunnelWalk.merge(places, of: $0, into: &merged, scratch: &scratch) })
    #expect(merged == events)
  }
}
