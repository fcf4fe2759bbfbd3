import CollectorReports
import CollectorStore
import Testing
import WireJSON

/// Orders in Segment's e-commerce spec and in Mixpanel's title case (what the Mixpanel service sends
/// for the Trendyol checkout) are counted by revenue and top items on every engine, with and without
/// the SQL engines' fact tables, as GA4's `purchase` is.
///
/// - E: D1 Mixpanel `Order Completed` M1 TRY `Revenue` 300 [`Product ID` P1 "Air Runner" Koston,
///   "Shoes > Sneakers", 100×3].
/// - F: D2 Segment `Order Completed` S1 USD `total` 55 (`revenue` 50) [P2 "Mug" Acme/Kitchen 25×2,
///   `sku` SKU-P3 "Tea" 5×1 (quantity missing: 1)]; D2 the same order again (S1 counts once);
///   D4 `Order Refunded` S1 USD `total` 25.
@Suite("Commerce in every vocabulary")
struct CommerceVocabularyTests {
  static let events: [StoredEvent] = [
    CommerceFixture.order(
      Fixture.a, "Order Completed", Fixture.at(1, 10, 0),
      #"{"Order ID":"M1","Currency":"TRY","Revenue":300,"Products":[{"Product ID":"P1","Name":"Air Runner","Brand":"Koston","Category":"Shoes > Sneakers","Price":100,"Quantity":3}]}"#
    ),
    CommerceFixture.order(
      Fixture.b, "Order Completed", Fixture.at(2, 10, 0),
      #"{"order_id":"S1","total":55,"revenue":50,"currency":"USD","products":[{"product_id":"P2","sku":"SKU-P2","name":"Mug","brand":"Acme","category":"Kitchen","price":25,"quantity":2},{"sku":"SKU-P3","name":"Tea","price":5}]}"#
    ),
    CommerceFixture.order(
      Fixture.b, "Order Completed", Fixture.at(2, 10, 1),
      #"{"order_id":"S1","total":55,"currency":"USD","products":[{"product_id":"P2","name":"Mug","price":25,"quantity":2}]}"#
    ),
    CommerceFixture.order(
      Fixture.b, "Order Refunded", Fixture.at(4, 9, 0), #"{"order_id":"S1","total":25,"currency":"USD"}"#),
  ]

  static let items: [TopItems.Row] = [
    TopItems.Row(item: "P1", name: "Air Runner", currency: "TRY", units: 3, revenue: 300, orders: 1, buyers: 1),
    TopItems.Row(item: "P2", name: "Mug", currency: "USD", units: 2, revenue: 50, orders: 1, buyers: 1),
    TopItems.Row(item: "SKU-P3", name: "Tea", currency: "USD", units: 1, revenue: 5, orders: 1, buyers: 1),
  ]

  @Test(arguments: Engine.available)
  func revenueAndTopItems(engine: Engine) async throws {
    let (store, reports) = try await engine.openReports([StoreBatch(events: Self.events)])
    var engines: [any ReportEngine] = [reports]
    if let sql = store as? any ReportQuerying { engines.append(SQLReports(store: sql, rollups: false)) }
    for reports in engines {
      let revenue = try await reports.revenue(Fixture.twoWeeks)
      #expect(
        revenue.current == [
          Revenue.Figures(currency: "TRY", orders: 1, gross: 300, refundCount: 0, refunds: 0),
          Revenue.Figures(currency: "USD", orders: 1, gross: 55, refundCount: 1, refunds: 25),
        ])
      #expect(try await reports.topItems(Fixture.twoWeeks, category: nil, brand: nil, limit: 10).rows == Self.items)
      let kitchen = try await reports.topItems(Fixture.twoWeeks, category: "Kitchen", brand: nil, limit: 10)
      #expect(kitchen.rows == [Self.items[1]])
    }
    try await store.close()
  }

  /// An id, currency or name is a string and an amount a number: a value of another JSON type is not
  /// taken for one (SQLite read an object's JSON text as a string, so two purchases whose
  /// `transaction_id` was the same object were one order, and `true` as an amount of 1).
  @Test(arguments: Engine.available)
  func aValueOfAnotherTypeIsNotAFact(engine: Engine) async throws {
    let events = [
      CommerceFixture.order(
        Fixture.a, "purchase", Fixture.at(1, 10, 0),
        #"{"transaction_id":{"k":1},"currency":["TRY"],"value":10,"items":[{"item_id":{"x":1},"item_name":"Named","item_brand":{"b":1},"item_category":[1],"price":10,"quantity":1}]}"#
      ),
      CommerceFixture.order(
        Fixture.a, "purchase", Fixture.at(1, 10, 1), #"{"transaction_id":{"k":1},"currency":["TRY"],"value":20}"#),
      CommerceFixture.order(
        Fixture.b, "purchase", Fixture.at(1, 10, 2),
        #"{"transaction_id":"T3","value":true,"items":[{"item_id":"B","price":false,"quantity":true}]}"#),
    ]
    let (store, reports) = try await engine.openReports([StoreBatch(events: events)])
    var engines: [any ReportEngine] = [reports]
    if let sql = store as? any ReportQuerying { engines.append(SQLReports(store: sql, rollups: false)) }
    for reports in engines {
      let revenue = try await reports.revenue(Fixture.twoWeeks)
      #expect(revenue.current == [Revenue.Figures(currency: "", orders: 3, gross: 30, refundCount: 0, refunds: 0)])
      let items = try await reports.topItems(Fixture.twoWeeks, category: nil, brand: nil, limit: 10).rows
      #expect(
        items == [
          TopItems.Row(item: "Named", name: "Named", currency: "", units: 1, revenue: 10, orders: 1, buyers: 1),
          TopItems.Row(item: "B", name: "", currency: "", units: 1, revenue: 0, orders: 1, buyers: 1),
        ])
    }
    try await store.close()
  }

  /// A GA4 item's category levels (`item_category` "Home", `item_category2` "Kitchen", as the shop
  /// sends them) are kept as its path: a category filter matches any whole level of it.
  @Test(arguments: Engine.available)
  func aCategoryMatchesAnyLevelOfTheItemsPath(engine: Engine) async throws {
    let purchase = CommerceFixture.order(
      Fixture.a, "purchase", Fixture.at(1, 11, 0),
      #"{"transaction_id":"G1","currency":"TRY","value":2499,"items":[{"item_id":"TY-1003","item_name":"Espresso Maker","item_category":"Home","item_category2":"Kitchen","price":2499,"quantity":1}]}"#
    )
    let (store, reports) = try await engine.openReports([StoreBatch(events: Self.events + [purchase])])
    var engines: [any ReportEngine] = [reports]
    if let sql = store as? any ReportQuerying { engines.append(SQLReports(store: sql, rollups: false)) }
    let espresso = TopItems.Row(
      item: "TY-1003", name: "Espresso Maker", currency: "TRY", units: 1, revenue: 2499, orders: 1, buyers: 1)
    for reports in engines {
      for (category, rows) in [
        ("Kitchen", [espresso, Self.items[1]]), ("Home", [espresso]), ("Home > Kitchen", [espresso]),
        ("Kitch", []), ("Sneakers", [Self.items[0]]),
      ] {
        let found = try await reports.topItems(Fixture.twoWeeks, category: category, brand: nil, limit: 10)
        #expect(found.rows == rows, "\(category)")
      }
    }
    try await store.close()
  }

  @Test func aRefundWithoutAnyValueIsARefundOfZeroAndItsKeyIsItsEventID() {
    let order = CommerceVocabulary.order(name: "Order Refunded", eventID: "e-1", parameters: .object([:]))
    #expect(order?.purchase == false && order?.key == "e-1" && order?.value == 0 && order?.items == [])
    #expect(CommerceVocabulary.order(name: "Order Viewed", eventID: "e-2", parameters: .object([:])) == nil)
  }
}
