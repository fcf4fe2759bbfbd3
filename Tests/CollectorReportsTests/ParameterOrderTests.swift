import CollectorReports
import CollectorSQLite
import CollectorStore
import CollectorWire
import TestSupport
import Testing
import WireJSON

/// The latest-events page gives each event's parameters as they were sent, keys in their order at
/// every depth and numbers as written, on every engine (PostgreSQL's `jsonb` alone would reorder
/// the keys and print `1e3` as the integer `1000`); the parameter-values report names each number
/// as the collector stored it, from the events and from the parameter cache (SQLite's cast to text
/// alone would keep 15 digits and read `0.30000000000000004` as `0.3`), and a search by that name
/// finds its event.
@Suite("Parameters read back as sent")
struct ParameterOrderTests {
  static let sent: [String] = [
    #"{"product_id":"p1","in_stock":true}"#,  // a longer key first: jsonb puts the shorter first
    #"{"a":1,"bb":{"zz":[1,{"y":2,"x":3}],"c":null}}"#,  // in jsonb's order outside, not inside
    #"{"n":1e3,"m":2.50,"s":"é \"q\" e"}"#,  // an exponent; letters and escapes inside a value
    #"{"id":"x","name":"y"}"#,  // already in jsonb's order
    #"{"b":[{"k":true},{"kk":false}],"a":{}}"#,
    "{}",
  ]

  @Test(arguments: Engine.available)
  func theLatestEventsGiveTheParametersAsSent(engine: Engine) async throws {
    let events = Self.sent.enumerated().map { index, parameters in
      var event = Fixture.event(Fixture.a, "sent", Fixture.at(0, 10, Int64(index)), session: 1)
      event.parametersJSON = parameters
      return event
    }
    let (store, reports) = try await engine.openReports([StoreBatch(events: events)])
    let page = try await reports.eventRows(Fixture.twoWeeks, event: "sent", limit: 50)
    let answered = Dictionary(uniqueKeysWithValues: page.rows.map { ($0.eventID, $0.parameters) })
    for event in events {
      let expected = StoredParameters.reported(event.parametersJSON)
      #expect(answered[event.eventID] == expected, "\(event.parametersJSON)")
    }
    try await store.close()
  }

  /// A number as sent, and as the collector stores it and every report names it.
  static let numbers: [(sent: String, stored: String)] = [
    ("1e20", "1e+20"), ("0.30000000000000004", "0.30000000000000004"), ("0.3", "0.3"),
    ("33.333333333333336", "33.333333333333336"), ("1e-5", "1e-05"), ("-1.5E-7", "-1.5e-07"),
    ("12345678901234567890", "1.2345678901234567e+19"), ("801.0", "801"), ("2.50", "2.5"), ("1e3", "1000"),
    ("0.0001", "0.0001"), ("-0.0", "0"),
  ]

  /// Every engine but a SQLite older than 3.38 (``SQLiteEventStore/namesNumbersAsStored``).
  static var namingNumbersAsStored: [Engine] {
    Engine.available.filter { $0 != .sqlite || SQLiteEventStore.namesNumbersAsStored }
  }

  @Test func theCISQLiteNamesNumbersAsStored() {
    if PostgresTestServer.isCI { #expect(SQLiteEventStore.namesNumbersAsStored, "Debian 12 links SQLite 3.40") }
  }

  @Test(arguments: namingNumbersAsStored)
  func parameterValuesNameNumbersAsStored(engine: Engine) async throws {
    let events = Self.numbers.enumerated().map { index, number in
      var event = Fixture.event(Fixture.a, "priced", Fixture.at(2, 10, Int64(index)), session: 1)
      // As every ingest route stores them: parsed, then written again.
      event.parametersJSON = String(decoding: StoredParameters.reported(#"{"v":\#(number.sent)}"#).json, as: UTF8.self)
      return event
    }
    #expect(events.map(\.parametersJSON) == Self.numbers.map { #"{"v":\#($0.stored)}"# })
    let expected = Set(Self.numbers.map(\.stored))
    let (store, reports) = try await engine.openReports([StoreBatch(events: events)])
    var answers = [try await reports.parameterValues(Fixture.twoWeeks, event: "priced", parameter: "v", limit: 50)]
    if let keeper = store as? any DeviceSetKeeping {  // then from the parameter cache of the built hours
      #expect(try await keeper.buildDeviceSets(before: Fixture.at(2, 11, 0)) > 0)
      answers.append(try await reports.parameterValues(Fixture.twoWeeks, event: "priced", parameter: "v", limit: 50))
    }
    for answer in answers {
      #expect(Set(answer.rows.map(\.name)) == expected)
      #expect(answer.rows.allSatisfy { $0.count == 1 })
    }
    // A search by a value finds the one event the report named with it.
    for (index, number) in Self.numbers.enumerated() {
      var search = EventSearch(event: "priced")
      search.parameters = [EventSearch.ParameterMatch(key: "v", value: number.stored)]
      let found = try await reports.eventRows(Fixture.twoWeeks, search: search, limit: 50, after: nil)
      #expect(found.rows.map(\.eventID) == [events[index].eventID], "v=\(number.stored)")
    }
    try await store.close()
  }
}
