import CollectorReports
import CollectorStore
import Testing

/// The SQL engines read a funnel's step events in any order and put them in order by unit in the
/// collector (``Funnel/byUnit(_:persons:)``): a person's devices form one path, events of one
/// millisecond keep their ids' order, and the order does not depend on the order read.
@Suite("A funnel's step events ordered by unit")
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

  static func rows(_ order: [Int]) -> [SQLRow] {
    order.map { index in
      let (device, name, time, id) = events[index]
      return SQLRow(
        columns: ["device_id", "name", "t", "event_id"], values: [.text(device), .text(name), .int(time), .text(id)])
    }
  }

  static func ordered(_ events: [FunnelEvent]) -> [String] {
    events.map { "\($0.unit) \($0.name) \($0.time)" }
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
  func devices(order: [Int]) {
    let found = Funnel.byUnit(Self.rows(order), persons: nil)
    #expect(
      Self.ordered(found) == [
        "guest view 500", "guest open 500", "phone open 1000", "phone view 2000", "phone buy 2000", "tablet view 1500",
      ])
    // A funnel open → view → buy within 10 s: the phone reaches the end, the guest's view came
    // before its open (by id, in the same millisecond), the tablet never opened.
    let funnel = Funnel(found, steps: ["open", "view", "buy"], window: 10_000, appVersion: nil, unit: .device)
    #expect(funnel.steps.map(\.devices) == [2, 1, 1])
  }
}
