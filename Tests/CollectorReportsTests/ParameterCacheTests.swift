import CollectorReports
import CollectorStore
import Testing

/// The parameter cache (``ParameterCacheBuild``): one event's values of a parameter read from the
/// cache where hours are built answer as the events do — every JSON type, keys missing, `null`,
/// odd keys, platform filters, built and unbuilt hours side by side; a damaged cache shows, and a
/// late event in its hour sends the report back to the events there.
@Suite("The parameter cache answers as the events do")
struct ParameterCacheTests {
  static let phone = Fixture.Device(id: "P", platform: "iOS", app: "1.0", os: "17")
  static let tablet = Fixture.Device(id: "T", platform: "Android", app: "2.0", os: "14")
  static let other = Fixture.Device(id: "O", platform: "iOS", app: "1.0", os: "17")

  /// A purchase of `device` at `minute` of hour `hour` on day 2, with `parameters`.
  static func purchase(_ device: Fixture.Device, _ hour: Int64, _ minute: Int64, _ parameters: String) -> StoredEvent {
    var event = Fixture.event(device, "purchase", Fixture.at(2, hour, minute), session: 1)
    event.eventID = "\(device.id)-\(hour)-\(minute)"
    event.parametersJSON = parameters
    return event
  }

  /// Hour 10: every JSON type and a key missing; hour 11: no event has `price` (its purchases are
  /// all `(none)` from their sets); hour 12: a key sent twice, a colon and digits in a value, an
  /// empty value; hour 13: a device the build has not numbered when only earlier hours are built.
  static let batch = StoreBatch(
    events: [
      purchase(phone, 10, 0, #"{"product_id":"p1","price":2.50,"in_stock":true,"Order ID":"A 1"}"#),
      purchase(phone, 10, 1, #"{"product_id":"p1","price":3,"in_stock":false,"tags":["a","b"]}"#),
      purchase(tablet, 10, 2, #"{"product_id":"p2","price":null,"meta":{"b":[1,2.50]},"we\"ird":"q"}"#),
      purchase(tablet, 10, 3, #"{"product_id":"ü→p3"}"#),
      purchase(other, 10, 4, "{}"),
      purchase(phone, 11, 0, #"{"product_id":"p1"}"#),
      purchase(tablet, 11, 1, #"{"product_id":"p2","in_stock":true}"#),
      purchase(phone, 12, 0, #"{"product_id":"p1","product_id":"p9","price":"12:30"}"#),
      purchase(other, 12, 1, #"{"product_id":"","price":1e3}"#),
      purchase(Fixture.Device(id: "N", platform: "iOS", app: "1.0", os: "17"), 13, 0, #"{"product_id":"p1"}"#),
    ])

  static let keys = ["product_id", "price", "in_stock", "tags", "meta", "Order ID", "we\"ird", "absent"]

  @Test(arguments: Engine.sql)
  func valuesFromTheCacheAreTheEventsValues(engine: Engine) async throws {
    let store = try await engine.open([Self.batch])
    let keeper = try #require(store as? any DeviceSetKeeping)
    let tables = try #require(store.deviceSets)
    let fromEvents = SQLReports(store: store, rollups: false)
    let served = SQLReports(store: store)
    // Only the hours before 13:00 built: the last purchase (a new device) is read from the events.
    #expect(try await keeper.buildDeviceSets(before: Fixture.at(2, 13, 0)) > 0)
    let cached = try await store.read("SELECT count(*) AS n FROM \(tables.parameters)", []).first?["n"].int
    #expect((cached ?? 0) > 0)
    var iOS = Fixture.twoWeeks
    iOS.platform = "iOS"
    for filter in [Fixture.twoWeeks, iOS] {
      for key in Self.keys {
        for limit in [50, 1] {
          let truth = try await fromEvents.parameterValues(filter, event: "purchase", parameter: key, limit: limit)
          let answer = try await served.parameterValues(filter, event: "purchase", parameter: key, limit: limit)
          #expect(answer == truth, "\(key), \(filter.platform ?? "every platform"), limit \(limit)")
        }
      }
    }
    let products = try await fromEvents.parameterValues(
      Fixture.twoWeeks, event: "purchase", parameter: "product_id", limit: 50)
    // p1: the phone's three, N's, and the phone's key sent twice where the engine keeps its first
    // value (SQLite's lookup; PostgreSQL's `jsonb` keeps the last); devices P and N.
    let ones = engine == .postgres ? "4" : "5"
    #expect(products.rows.first.map { [$0.name, "\($0.count)", "\($0.devices)"] } == ["p1", ones, "2"])
    try await store.close()
  }

  @Test(arguments: Engine.sql)
  func aDamagedCacheShowsAndALateEventReadsTheEventsAgain(engine: Engine) async throws {
    let store = try await engine.open([Self.batch])
    let keeper = try #require(store as? any DeviceSetKeeping)
    let tables = try #require(store.deviceSets)
    try await keeper.buildDeviceSets(before: .max)
    let filter = Fixture.twoWeeks
    let fromEvents = SQLReports(store: store, rollups: false)
    let served = SQLReports(store: store)
    let truth = try await fromEvents.parameterValues(filter, event: "purchase", parameter: "price", limit: 50)
    #expect(try await served.parameterValues(filter, event: "purchase", parameter: "price", limit: 50) == truth)

    // Hour 10's price rows gone, its marks kept: its purchases read as `(none)`.
    try await store.execute(
      "DELETE FROM \(tables.parameters) WHERE key = 'price' AND hour = \(Fixture.at(2, 10, 0))")
    let damaged = try await served.parameterValues(filter, event: "purchase", parameter: "price", limit: 50)
    #expect(damaged != truth)
    #expect(damaged.rows.first { $0.name == "(none)" }?.count == 8)

    // A late purchase in hour 10 deletes the hour's marks and rows: its events are read again.
    _ = try await store.write(StoreBatch(events: [Self.purchase(Self.other, 10, 30, #"{"price":3}"#)]))
    let relaid = try await fromEvents.parameterValues(filter, event: "purchase", parameter: "price", limit: 50)
    #expect(relaid.rows.first { $0.name == "3" }?.count == 2)
    #expect(try await served.parameterValues(filter, event: "purchase", parameter: "price", limit: 50) == relaid)
    try await store.close()
  }

  /// Events without the key are `(none)` per device; a key sent twice in one event counts once;
  /// `null` is `(none)`.
  @Test func theBuildCountsEventsWithoutTheKeyAsNone() throws {
    var build = ParameterCacheBuild()
    let row = StepCacheBuild.Key(hour: 0, name: "purchase", platform: "iOS", appVersion: "1", osVersion: "18")
    build.addEvents(row, number: 7, events: 3)
    build.addEvents(row, number: 9, events: 1)
    build.addParameter(row, number: 7, event: "e-1", key: "currency", value: "TRY")
    build.addParameter(row, number: 7, event: "e-1", key: "currency", value: "EUR")
    build.addParameter(row, number: 7, event: "e-2", key: "currency", value: nil)
    build.addParameter(row, number: 9, event: "e-3", key: "currency", value: "TRY")
    let rows = build.finish()
    let currency = try #require(rows.first)
    #expect(rows.count == 1 && currency.values == ["TRY", "(none)"])
    var entries: [[UInt32]] = stride(from: 0, to: currency.entries.count, by: 3).map {
      Array(currency.entries[$0..<$0 + 3])
    }
    entries.sort { $0.lexicographicallyPrecedes($1) }
    // TRY: device 7 once, device 9 once; (none): device 7's two other events.
    #expect(entries == [[0, 7, 1], [0, 9, 1], [1, 7, 2]])
  }

  @Test(arguments: [[], [""], ["a:b", "12:30", "3:x"], ["ü→", "(none)", String(repeating: "9", count: 300)]])
  func valuesRoundTrip(values: [String]) {
    #expect(ParameterCacheCoding.decode(ParameterCacheCoding.encode(values)) == values)
  }

  @Test(arguments: ["x", "3:ab", "a:b", "-1:"])
  func malformedValuesAreRejected(text: String) {
    #expect(ParameterCacheCoding.decode(text) == nil)
  }
}
