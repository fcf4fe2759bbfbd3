import CollectorReports
import CollectorStore
import CollectorWire
import Testing
import WireJSON

/// The latest-events page gives each event's parameters as they were sent, keys in their order at
/// every depth and numbers as written, on every engine (PostgreSQL's `jsonb` alone would reorder
/// the keys and print `1e3` as the integer `1000`).
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
}
