import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

private let sneaker = CommerceItem(
  id: "SKU-1", name: "Sneaker", brand: "Trendyol", categories: ["Shoes", "Men", "Running"], variant: "42",
  price: 49.5, quantity: 2, coupon: "SHOE10", discount: 5, index: 0, custom: ["in_stock": true, "price": 1])
private let socks = CommerceItem(name: "Socks", price: 9.99)

@Suite("Structured values and commerce")
struct StructuredValueTests {
  @Test func literalsNestListsAndObjectsInOrder() {
    let parameters: EventParameters = [
      "tags": ["summer", "sale"], "items": [["item_id": "SKU-1", "price": 9.99, "quantity": 2]], "empty": [],
    ]
    #expect(parameters["tags"] == .list([.string("summer"), .string("sale")]))
    guard case .list(let items)? = parameters["items"], case .object(let item)? = items.first else {
      Issue.record("items is not a list of objects")
      return
    }
    #expect(item.keys == ["item_id", "price", "quantity"])
    #expect(parameters["items"]?.depth == 2)
    #expect(parameters["tags"]?.depth == 1)
    #expect(parameters["empty"]?.depth == 1)
    #expect(ParameterValue.int(1).depth == 0)
  }

  static let texts: [(ParameterValue, String)] = [
    (["a", 1, 2.5, true], #"["a",1,2.5,true]"#),
    (
      ["k": "say \"hi\"\n", "n": .double(.nan), "d": .date(Date(timeIntervalSince1970: 0))],
      #"{"k":"say \"hi\"\n","n":null,"d":"1970-01-01T00:00:00.000Z"}"#
    ),
    ([[], [:]], "[[],{}]"),
    (.string("\u{1}"), "\u{1}"),
  ]

  @Test(arguments: texts)
  func structuredValuesReadAsCompactJSON(value: ParameterValue, text: String) {
    #expect(value.text == text)
  }

  @Test func anItemUsesGA4sKeysInOrderAndCustomFieldsLast() {
    #expect(
      sneaker.parameters.pairs.map { "\($0.key)=\($0.value.text)" } == [
        "item_id=SKU-1", "item_name=Sneaker", "item_brand=Trendyol", "item_category=Shoes", "item_category2=Men",
        "item_category3=Running", "item_variant=42", "price=49.5", "quantity=2", "coupon=SHOE10", "discount=5.0",
        "index=0", "in_stock=true",
      ])
  }

  @Test func anOrdersValueDefaultsToItsItemsTotal() {
    let order = CommerceOrder(
      transactionID: "T-1", currency: "TRY", items: [sneaker, socks], tax: 18, shipping: 29.99, coupon: "WELCOME")
    #expect(order.itemsTotal == 49.5 * 2 + 9.99)
    #expect(
      order.parameters.keys == ["transaction_id", "currency", "value", "tax", "shipping", "coupon", "items"])
    #expect(order.parameters["value"] == .double(108.99))
    #expect(order.parameters["items"] == .list([sneaker.value, socks.value]))
    #expect(CommerceOrder(currency: "TRY", items: [], value: 5).parameters["value"] == .double(5))
  }

  @Test func aFullRefundWithoutValueOrItemsStatesNoValue() {
    let refund = CommerceOrder(transactionID: "T-1", currency: "TRY", items: [])
    #expect(refund.parameters.keys == ["transaction_id", "currency", "items"])
    #expect(refund.parameters(style: .titleCase)["Revenue"] == nil)
  }

  static let invalid: [(String, ParameterValue)] = [
    ("not finite", .double(.infinity)),
    ("not finite inside", ["items": [["price": .double(.nan)]]]),
    ("too deep", [[[[["x"]]]]]),
    ("too long", .list(Array(repeating: 1, count: 501))),
    ("bad key inside", [" padded": 1]),
  ]

  @Test(arguments: invalid)
  func anInvalidValueDropsItsEventAndIsCounted(label: String, value: ParameterValue) async {
    let harness = Harness()
    harness.tracker.track(GenericEvent("bad", parameters: ["value": value]))
    harness.tracker.track(GenericEvent("good", parameters: ["items": [["price": 1.5]]]))
    await harness.flush()
    #expect(harness.collector.names == ["good"], "\(label)")
    #expect(harness.tracker.stats.dropped(.invalidValue) == 1, "\(label)")
  }

  @Test func theValidationStageSaysWhereAValueIsWrong() {
    let stage = ValidationStage()
    #expect(stage.problem(in: ["items": [["price": 1], ["price": .double(.nan)]]])?.path == ".items[1].price")
    #expect(stage.problem(in: [[[[["x"]]]]])?.reason == "nests deeper than 4 levels")
    #expect(stage.problem(in: sneaker.value) == nil)
  }

  @Test func personalKeysInsideObjectsAreScrubbed() async throws {
    var buyer: EventParameters = ["city": "Ankara"]
    buyer.append(personal: "phone", "+90555")
    let harness = Harness { $0.privacy = PrivacyStage(personalKeys: ["email"], action: .hash(salt: "s")) }
    harness.tracker.track(
      GenericEvent("purchase", parameters: ["buyer": .object(buyer), "items": [["item_id": "1", "email": "a@b.c"]]]))
    await harness.flush()
    let event = try #require(harness.collector.events.first)
    #expect(
      event.parameters["buyer"]
        == ["city": "Ankara", "phone": .string(Hashing.sha256Hex("s+90555"))])
    #expect(event.parameters["items"] == [["item_id": "1", "email": .string(Hashing.sha256Hex("sa@b.c"))]])
    let dropping = Harness { $0.privacy = PrivacyStage(personalKeys: ["email"]) }
    dropping.tracker.track(GenericEvent("purchase", parameters: ["items": [["item_id": "1", "email": "a@b.c"]]]))
    await dropping.flush()
    #expect(dropping.collector.events.first?.parameters["items"] == [["item_id": "1"]])
  }

  @Test func theTestKitComparesNestedValuesInOrder() async {
    let recording = RecordingTracker()
    let order = CommerceOrder(transactionID: "T-1", currency: "TRY", items: [socks])
    recording.track(GenericEvent("purchase", parameters: order.parameters))
    recording.expectReceived(
      by: .collector,
      [
        (
          "purchase",
          [
            "transaction_id": "T-1", "currency": "TRY", "value": 9.99,
            "items": [["item_name": "Socks", "price": 9.99]],
          ]
        )
      ])
  }
}
