import CollectorReports
import CollectorStore
import NIOCore
import TestSupport
import Testing

@testable import CollectorClickHouse

/// ClickHouse's funnel rows (a unit's hash and its step events, in `Native` blocks) read in pieces
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

  /// `units` as the server sends them, for `walk`'s names, in `format`: `Native` blocks of
  /// `blockRows` rows, a named row for each name of a unit's row, its times sorted.
  static func native(
    _ units: [(hash: UInt64, events: [(name: String, time: Int64)])], names: [String],
    format: FunnelRowFormat = formats[0], blockRows: Int = 7
  ) -> ByteBuffer {
    var rows: [Row] = []
    for unit in units {
      let placed = unit.events.map { (place: Int64(names.firstIndex(of: $0.name) ?? 0), time: $0.time) }
      guard format.kind != .packed else {
        rows.append((unit.hash, 0, placed.map { $0.time << PackedFunnelWalk.nameBits | $0.place }))
        continue
      }
      for (place, events) in Dictionary(grouping: placed, by: \.place).sorted(by: { $0.key < $1.key }) {
        rows.append((unit.hash, place, events.map(\.time).sorted()))
      }
    }
    return blocks(rows, format: format, blockRows: blockRows)
  }

  /// A row as the server sends it: its unit, its name's place (named rows) and its values.
  typealias Row = (hash: UInt64, place: Int64, values: [Int64])

  /// `rows` as ClickHouse's `Native` blocks of `blockRows` rows each, their columns of `types` (by
  /// default `format`'s): the units, the places (three columns), the arrays' ends, their elements.
  static func blocks(
    _ rows: [Row], format: FunnelRowFormat, blockRows: Int = 7, types: [String]? = nil
  ) -> ByteBuffer {
    var buffer = ByteBuffer()
    func length(_ count: Int) {
      var count = count
      repeat {
        buffer.writeInteger(UInt8(count & 0x7F) | (count > 0x7F ? 0x80 : 0))
        count >>= 7
      } while count > 0
    }
    func text(_ text: String) {
      length(text.utf8.count)
      buffer.writeString(text)
    }
    let types = types ?? format.columnTypes
    for start in stride(from: 0, to: rows.count, by: blockRows) {
      let block = rows[start..<min(rows.count, start + blockRows)]
      length(types.count)
      length(block.count)
      text("unit")
      text(types[0])
      for row in block { buffer.writeInteger(row.hash, endianness: .little) }
      if types.count == 3 {
        text("place")
        text(types[1])
        for row in block { buffer.writeInteger(UInt8(truncatingIfNeeded: row.place)) }
      }
      text("events")
      text(types[types.count - 1])
      var end: UInt64 = 0
      for row in block {
        end += UInt64(row.values.count)
        buffer.writeInteger(end, endianness: .little)
      }
      for value in block.flatMap(\.values) {
        if format.eventBytes == 4 {
          buffer.writeInteger(UInt32(truncatingIfNeeded: value), endianness: .little)
        } else {
          buffer.writeInteger(value, endianness: .little)
        }
      }
    }
    return buffer
  }

  /// `answer` (rows of `format`) read in pieces of `piece` bytes, one unit after another
  /// (``FunnelRows``) or gathered in any order (``GatheredFunnelRows``).
  static func read(
    _ answer: ByteBuffer, format: FunnelRowFormat = formats[0], piece: Int = 1 << 20, gathered: Bool,
    owners: OwnedDevices = .none
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
      let answer = Self.native(units, names: names, format: format, blockRows: piece % 5 + 1)
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
    let chosen = units.indices.reversed().filter { $0 % 3 == (units.count - 1) % 3 }
    let owners = OwnedDevices(
      firsts: chosen.enumerated().map { (units[$0.element].hash, UInt64.max - UInt64($0.offset / 2)) })
    #expect(owners.person(of: units[units.count - 1].hash) != nil)
    var split = units.flatMap { unit in
      stride(from: 0, to: max(1, unit.events.count), by: 2).map {
        (hash: unit.hash, events: Array(unit.events[$0..<min(unit.events.count, $0 + 2)]))
      }
    }
    if gathered { split.shuffle(using: &random) }
    let names = PackedFunnelWalk(steps: Self.steps, window: Self.window).names
    let read = try #require(
      try await Self.read(
        Self.native(split, names: names, format: format), format: format, gathered: gathered, owners: owners))
    // Each unit (a person's hash, or a device's) and its events; a person whose two devices sent
    // different names in one millisecond is tied.
    let byUnit = Dictionary(grouping: units) { owners.person(of: $0.hash) ?? $0.hash }.mapValues {
      $0.flatMap(\.events)
    }
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
    try rows.take(Self.native(units, names: walk.names))
    let walked = try await rows.finished(owners: .none)
    #expect((walked == nil) == (events > most))
  }

  @Test func aRowCutShortOrANameOutOfPlaceIsAnError() throws {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    var rows = FunnelRows(walk: walk, format: Self.formats[0])
    let answer = Self.native(
      [(hash: 7, events: [(name: "view", time: 0), (name: "buy", time: 1)])], names: walk.names)
    try rows.take(answer.getSlice(at: 0, length: answer.readableBytes - 1) ?? ByteBuffer())
    #expect(throws: FunnelRows.Malformed.self) { try rows.finished() }
    let outOfPlace = Self.blocks([(7, 0, [Int64(walk.names.count)])], format: Self.formats[0])
    var other = FunnelRows(walk: walk, format: Self.formats[0])
    #expect(throws: FunnelRows.Malformed.self) { try other.take(outOfPlace) }
  }

  /// Gathered rows are checked when they are walked: a name out of place fails the answer.
  @Test func aGatheredNameOutOfPlaceFailsTheAnswer() async throws {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    let outOfPlace = Self.blocks([(7, 0, [Int64(walk.names.count)])], format: Self.formats[0])
    var rows = GatheredFunnelRows(walk: walk, format: Self.formats[0], most: 1 << 20)
    try rows.take(outOfPlace)
    await #expect(throws: StoreError.self) { _ = try await rows.finished(owners: .none) }
  }

  /// A named row out of its range or of a name out of place is an error, whether streamed or gathered.
  @Test(arguments: [
    (format: formats[1], place: 1, time: span), (format: formats[1], place: 4, time: 0),
    (format: formats[2], place: 1, time: 1 << 33), (format: formats[2], place: 1, time: -1),
    (format: formats[2], place: 200, time: 0),
  ])
  func aNamedRowOutOfItsRangeIsAnError(format: FunnelRowFormat, place: Int, time: Int64) async throws {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    let row = Self.blocks([(7, Int64(place), [time])], format: format)
    var streamed = FunnelRows(walk: walk, format: format)
    #expect(throws: FunnelRows.Malformed.self) { try streamed.take(row) }
    var gathered = GatheredFunnelRows(walk: walk, format: format, most: 1 << 20)
    try gathered.take(row)
    await #expect(throws: StoreError.self) { _ = try await gathered.finished(owners: .none) }
  }

  /// A block whose columns are not the format's, or whose rows end out of order or past its events,
  /// is an error whether streamed or gathered; a block of no rows is skipped, and a whole block of
  /// the format's columns is walked.
  @Test(arguments: [
    (types: ["UInt64", "UInt8", "Array(UInt64)"], ends: [UInt64(1)], fails: true),
    (types: ["UInt64", "Array(UInt32)"], ends: [1], fails: true),
    (types: ["UInt32", "UInt8", "Array(UInt32)"], ends: [1], fails: true),
    (types: ["UInt64", "UInt8", "Array(UInt32)"], ends: [2, 1], fails: true),
    (types: ["UInt64", "UInt8", "Array(UInt32)"], ends: [UInt64.max - 1, UInt64.max], fails: true),
    (types: ["UInt64", "UInt8", "Array(UInt32)"], ends: [UInt64.max, 1], fails: true),
    (types: ["UInt64", "UInt8", "Array(UInt32)"], ends: [1, 3], fails: false),
  ])
  func aBlockIsCheckedAgainstItsFormat(types: [String], ends: [UInt64], fails: Bool) async throws {
    let walk = PackedFunnelWalk(steps: Self.steps, window: Self.window)
    let format = Self.formats[1]
    var block = ByteBuffer()
    func text(_ text: String) {
      block.writeInteger(UInt8(text.utf8.count))
      block.writeString(text)
    }
    // A block of no rows first (skipped), then one of `types`, a row an end, each event 4 bytes.
    block.writeBytes([3, 0])
    for (name, type) in zip(["unit", "place", "ts"], format.columnTypes) {
      text(name)
      text(type)
    }
    block.writeBytes([UInt8(types.count), UInt8(ends.count)])
    text("unit")
    text(types[0])
    for _ in ends { block.writeInteger(UInt64(7), endianness: .little) }
    if types.count == 3 {
      text("place")
      text(types[1])
      for _ in ends { block.writeInteger(UInt8(walk.names.firstIndex(of: "view")!)) }
    }
    text("ts")
    text(types[types.count - 1])
    for end in ends { block.writeInteger(end, endianness: .little) }
    for _ in 0..<min(ends.last ?? 0, 16) { block.writeInteger(UInt32(0), endianness: .little) }
    var streamed = FunnelRows(walk: walk, format: format)
    var gathered = GatheredFunnelRows(walk: walk, format: format, most: 1 << 20)
    guard fails else {
      // Unit 7's two rows, three views at 0 ms: the first step reached.
      try streamed.take(block)
      try gathered.take(block)
      #expect(try streamed.finished().reached == [1, 0, 0, 0])
      #expect(try await gathered.finished(owners: .none)?.reached == [1, 0, 0, 0])
      return
    }
    #expect(throws: FunnelRows.Malformed.self) { try streamed.take(block) }
    #expect(throws: FunnelRows.Malformed.self) { try gathered.take(block) }
  }

  /// Every identified device's rows read in pieces cut anywhere: a device's person is that of its
  /// earliest row; only the devices of people with two or more are owned, sorted; a device with two
  /// people in its first millisecond is named tied, for the server to pick; a row cut short is an
  /// error.
  @Test(arguments: [1, 5, 24, 1_000])
  func onlyPeopleWithTwoOrMoreDevicesOwnTheirs(piece: Int) throws {
    // Device 2 was person 20's first, then 10's; device 8's first millisecond has two people, its
    // later row a third; device 9's two people share a millisecond after its first.
    let rows: [(device: UInt64, person: UInt64, at: Int64)] = [
      (1, 10, 5), (2, 10, 9), (2, 20, 3), (3, 10, 1), (4, 30, 0), (5, 30, 7), (6, 30, 2), (6, 30, 2), (7, 40, 4),
      (8, 50, 6), (8, 60, 6), (8, 70, 9), (9, 40, 1), (9, 70, 3), (9, 80, 3),
    ]
    let whole = Self.personRows(rows)
    var read = FirstPersons()
    for start in stride(from: 0, to: whole.readableBytes, by: piece) {
      read.take(whole.getSlice(at: start, length: min(piece, whole.readableBytes - start)) ?? ByteBuffer())
    }
    let (firsts, tied) = try read.finished().firsts()
    #expect(firsts.map(\.device) == Array(1...9))
    #expect(tied == [8])
    let owned = OwnedDevices(firsts: firsts)
    #expect(Dictionary(uniqueKeysWithValues: owned.pairs) == [1: 10, 3: 10, 4: 30, 5: 30, 6: 30, 7: 40, 9: 40])
    #expect(owned.devices == owned.devices.sorted())
    #expect(owned.person(of: 5) == 30 && owned.person(of: 2) == nil && owned.person(of: 100) == nil)
    #expect(owned.start(atLeast: 0) == 0 && owned.start(atLeast: 8) == 6 && owned.start(atLeast: 10) == 7)
    // The server picks person 40 for device 8 (by event id): then it is owned with 7 and 9.
    let settled = firsts.map { ($0.device, $0.device == 8 ? 40 : $0.person) }
    #expect(OwnedDevices(firsts: settled).person(of: 8) == 40)
    var cut = FirstPersons()
    cut.take(whole.getSlice(at: 0, length: 30) ?? ByteBuffer())
    #expect(throws: FunnelRows.Malformed.self) { try cut.finished() }
  }

  /// Device-to-person rows as the server sends them (`RowBinary`).
  static func personRows(_ rows: [(device: UInt64, person: UInt64, at: Int64)]) -> ByteBuffer {
    var answer = ByteBuffer()
    for row in rows {
      answer.writeInteger(row.device, endianness: .little)
      answer.writeInteger(row.person, endianness: .little)
      answer.writeInteger(row.at, endianness: .little)
    }
    return answer
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
