import CollectorReports
import CollectorStore
import TestSupport
import Testing

/// The SQL engines read a funnel's step events in any order and group them by unit in the
/// collector (``Funnel/byUnit(_:persons:)``): a person's devices form one path, events of one
/// millisecond keep their ids' order, and the order does not depend on the order read.
@Suite("A funnel's step events grouped by unit")
struct FunnelOrderTests {
  /// (device, name, t, event id), as the SQL engines read them.
  static let events: [(String, String, Int64, String)] = [
    ("phone", "open", 1_000, "e-01"),
    ("tablet", "view", 1_500, "e-05"),
    ("phone", "view", 2_000, "e-03"),
    ("phone", "buy", 2_000, "e-04"),
    ("guest", "open", 500, "e-02"),
    ("guest", "view", 500, "e-00"),
  ]

  static func rows(_ order: [Int]) -> StepEventColumns {
    StepEventColumns(
      order.map { index in
        let (device, name, time, id) = events[index]
        return SQLRow(
          columns: ["device_id", "name", "t", "event_id"], values: [.text(device), .text(name), .int(time), .text(id)])
      })
  }

  /// The events as "unit name time": each unit's run in its order, the runs sorted by unit (the
  /// walk needs a unit's events together, not the units in any order); `nil` when a unit's events
  /// are not one run.
  static func ordered(_ events: [FunnelEvent]) -> [String]? {
    var runs: [(unit: String, lines: [String])] = []
    for event in events {
      if runs.last?.unit != event.unit {
        guard !runs.contains(where: { $0.unit == event.unit }) else { return nil }
        runs.append((event.unit, []))
      }
      runs[runs.count - 1].lines.append("\(event.unit) \(event.name) \(event.time)")
    }
    return runs.sorted { $0.unit < $1.unit }.flatMap(\.lines)
  }

  @Test(
    "people: a person's devices are one path, in time and then id order",
    arguments: [
      [0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [3, 0, 5, 2, 4, 1],
    ])
  func people(order: [Int]) {
    let found = Funnel.byUnit(Self.rows(order), persons: ["phone": "ada", "tablet": "ada"])
    #expect(
      Self.ordered(found) == [
        "d:guest view 500", "d:guest open 500", "u:ada open 1000", "u:ada view 1500", "u:ada view 2000",
        "u:ada buy 2000",
      ])
  }

  @Test("devices: each device its own path", arguments: [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0]])
  func devices(order: [Int]) async {
    let found = Funnel.byUnit(Self.rows(order), persons: nil)
    #expect(
      Self.ordered(found) == [
        "guest view 500", "guest open 500", "phone open 1000", "phone view 2000", "phone buy 2000", "tablet view 1500",
      ])
    // A funnel open → view → buy within 10 s: the phone reaches the end, the guest's view came
    // before its open (by id, in the same millisecond), the tablet never opened. The same from the
    // events (ClickHouse's tied units) and from the columns (the SQL engines).
    let steps = ["open", "view", "buy"]
    #expect(Funnel.reached(found, steps: steps, window: 10_000) == [2, 1, 1])
    #expect(await Funnel.reached(Self.rows(order), persons: nil, steps: steps, window: 10_000) == [2, 1, 1])
  }

  /// Step events of `units` people's devices (two each, one in three never identified), with
  /// names from a small set so that steps repeat and ties within a millisecond are common.
  static func generated(seed: UInt64, units: Int) -> (StepEventColumns, persons: [ExactText: String]) {
    var random = SeededRandom(seed: seed)
    var found = StepEventColumns()
    var persons: [ExactText: String] = [:]
    for unit in 0..<units where unit % 3 != 0 {
      (persons[ExactText("a\(unit)")], persons[ExactText("b\(unit)")]) = ("p\(unit)", "p\(unit)")
    }
    for index in 0..<(units * 12) {
      let device = (Bool.random(using: &random) ? "a" : "b") + String(Int.random(in: 0..<units, using: &random))
      let name = ["open", "view", "cart", "buy"].randomElement(using: &random)!
      let digits = String(index)
      var id = "e-" + String(repeating: "0", count: 6 - digits.count) + digits
      id.withUTF8 {
        found.append(
          device: device, name: name, time: Int64.random(in: 0..<40, using: &random) * 250,
          id: UnsafeRawBufferPointer($0))
      }
    }
    return (found, persons)
  }

  @Test(
    "walked in parts at once, every unit reaches what it reaches walked alone",
    arguments: [1, 2, 3, 7, 500], [false, true])
  func parts(count: Int, people: Bool) async {
    let (found, persons) = Self.generated(seed: UInt64(count), units: 300)
    let steps = ["open", "view", "view", "cart", "buy"]
    let alone = Funnel.reached(Funnel.byUnit(found, persons: people ? persons : nil), steps: steps, window: 5_000)
    #expect(alone[0] > alone[4] && alone[4] > 0)
    let walked = await Funnel.reached(
      found, persons: people ? persons : nil, steps: steps, window: 5_000, parts: count)
    #expect(walked == alone)
  }

  @Test(
    "a funnel is walked in one part per core, each of at least 100,000 step events",
    arguments: [
      (0, 2, 1), (99_999, 2, 1), (100_000, 2, 1), (199_999, 2, 1), (200_000, 2, 2), (10_000_000, 2, 2),
      (350_000, 8, 3), (10_000_000, 8, 8), (10_000_000, 1, 1), (5, 0, 1),
    ])
  func defaultParts(events: Int, cores: Int, parts: Int) {
    #expect(Funnel.parts(events: events, cores: cores) == parts)
  }

  @Test("a funnel of more step events than one part holds is walked in parts by default, to the same answer")
  func defaultPartsWalked() async {
    let units = 2 * Funnel.eventsPerPart / 12 + 1
    let (found, persons) = Self.generated(seed: 42, units: units)
    #expect(Funnel.parts(events: found.count, cores: 2) == 2)
    let steps = ["open", "view", "cart", "buy"]
    for people in [nil, persons] {
      let alone = await Funnel.reached(found, persons: people, steps: steps, window: 5_000, parts: 1)
      #expect(alone[0] > alone[3] && alone[3] > 0)
      #expect(await Funnel.reached(found, persons: people, steps: steps, window: 5_000) == alone)
    }
  }

  @Test(
    "the SQL engines read step events into columns holding the rows' events",
    arguments: Engine.sql, [nil, 50] as [Int64?])
  func columnsHoldTheRows(engine: Engine, limit: Int64?) async throws {
    let store = try await engine.open(Generated.batches)
    let dialect = store.dialect
    let sql =
      "SELECT device_id, name, \(dialect.milliseconds("occurred_at")) AS t, event_id FROM \(store.eventsTable) "
      + "WHERE app = \(dialect.placeholder(1)) AND name IN (\(dialect.placeholder(2)), \(dialect.placeholder(3))) "
      + "ORDER BY occurred_at, event_id" + (limit.map { " LIMIT \($0)" } ?? "")
    let arguments: [SQLValue] = [.text("shop"), .text("purchase"), .text("app_open")]
    let columns = try await store.readStepEvents(sql, arguments)
    let rows = StepEventColumns(try await store.read(sql, arguments))
    // PostgreSQL hands the events over a day at a time: the same events, in another order.
    #expect(columns.count == rows.count)
    #expect(Self.ordered(Funnel.byUnit(columns, persons: nil)) == Self.ordered(Funnel.byUnit(rows, persons: nil)))
    #expect(columns.count == (limit.map(Int.init) ?? columns.count) && columns.count > 0)
    #expect(Set(columns.names) == ["purchase", "app_open"])
    if engine == .sqlite { #expect(columns == rows) }
    try await store.close()
  }

  @Test("step events read in two halves of the range and joined are the events of the whole range")
  func halvesJoined() async throws {
    let store = try await Engine.sqlite.open(Generated.batches)
    let sql =
      "SELECT device_id, name, occurred_at AS t, event_id FROM events WHERE app = ?1 AND occurred_at >= ?2 "
      + "AND occurred_at < ?3 ORDER BY occurred_at, event_id"
    let (start, end) = (Generated.start, Generated.start + 21 * 86_400_000)
    let middle = start + 9 * 86_400_000 + 1_234
    var joined = try await store.readStepEvents(sql, [.text("shop"), .int(start), .int(middle)])
    let late = try await store.readStepEvents(sql, [.text("shop"), .int(middle), .int(end)])
    #expect(joined.count > 0 && late.count > 0)
    joined.append(contentsOf: late)
    #expect(joined == (try await store.readStepEvents(sql, [.text("shop"), .int(start), .int(end)])))
    try await store.close()
  }
}
