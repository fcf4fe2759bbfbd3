import CoreTrackerTesting
import TYCheckout
import TYTracker
import Testing

@Suite("Trendyol checkout")
struct CheckoutPresenterTests {
  let cart = Cart(
    items: [
      CartItem(
        productID: "P1", name: "Air Runner", unitPriceMinor: 1_000_00, quantity: 1, brand: "Koston",
        categories: ["Shoes", "Sneakers"], variant: "42"),
      CartItem(productID: "P2", name: "Socks", unitPriceMinor: 50_00, quantity: 2),
    ], shippingMinor: 29_99)

  /// The cart's items as every service but Mixpanel receives them (GA4's keys, in order).
  static let items: ParameterValue = [
    [
      "item_id": "P1", "item_name": "Air Runner", "item_brand": "Koston", "item_category": "Shoes",
      "item_category2": "Sneakers", "item_variant": "42", "price": 1000.0, "quantity": 1, "index": 0,
    ],
    ["item_id": "P2", "item_name": "Socks", "price": 50.0, "quantity": 2, "index": 1],
  ]

  private func presenter(_ tracker: any CoreTracker, cart: Cart? = nil) -> CheckoutPresenter {
    CheckoutPresenter(cart: cart ?? self.cart, makeOrderID: { "TY-TEST-1" }, tracker: tracker)
  }

  @Test func viewingTracksTheCartAsAnOrderInEachServicesShape() {
    let tracker = RecordingTracker()
    presenter(tracker).viewDidAppear()
    // 1,100.00 of goods with 20% VAT included (183.33) and 29.99 shipping.
    let order: EventParameters = [
      "currency": "TRY", "value": 1129.99, "tax": 183.33, "shipping": 29.99, "items": Self.items,
    ]
    tracker.expectReceived(by: TYService.collector, [("checkout_viewed", order)])
    tracker.expectReceived(by: TYService.firebase, [("begin_checkout", order)])
    tracker.expectReceived(
      by: TYService.mixpanel,
      [
        (
          "Checkout Started",
          [
            "Currency": "TRY", "Revenue": 1129.99, "Tax": 183.33, "Shipping": 29.99,
            "Products": [
              [
                "Product ID": "P1", "Name": "Air Runner", "Brand": "Koston", "Category": "Shoes > Sneakers",
                "Variant": "42", "Price": 1000.0, "Quantity": 1, "Position": 0,
              ],
              ["Product ID": "P2", "Name": "Socks", "Price": 50.0, "Quantity": 2, "Position": 1],
            ],
          ]
        )
      ])
  }

  @Test(arguments: [
    ("WELCOME10", true, 110_00), (" welcome10 ", true, 110_00), ("SAVE50", true, 50_00), ("BOGUS", false, 0),
  ])
  func couponsApplyOrAreRejectedWithAReason(code: String, applies: Bool, discount: Int) {
    let tracker = RecordingTracker()
    let checkout = presenter(tracker)
    #expect(checkout.applyCoupon(code) == applies)
    #expect(checkout.state.discountMinor == discount)
    #expect(checkout.state.totalMinor == cart.subtotalMinor - discount + cart.shippingMinor)
    let normalized = String(code.filter { !$0.isWhitespace }).uppercased()
    if applies {
      tracker.expectReceived(
        by: TYService.log,
        [("coupon_applied", ["coupon": .string(normalized), "discount": .double(Double(discount) / 100)])])
    } else {
      tracker.expectReceived(by: TYService.log, [("coupon_rejected", ["coupon": "BOGUS", "reason": "unknown_code"])])
    }
  }

  @Test func aCouponBelowItsMinimumIsRejected() {
    let tracker = RecordingTracker()
    let small = Cart(items: [CartItem(productID: "P2", name: "Socks", unitPriceMinor: 50_00, quantity: 1)])
    #expect(!presenter(tracker, cart: small).applyCoupon("SAVE50"))
    tracker.expectReceived(
      by: TYService.log, [("coupon_rejected", ["coupon": "SAVE50", "reason": "minimum_not_reached"])])
  }

  @Test func placingAnOrderTracksThePurchaseWithoutTheEmailInTheUniformShape() throws {
    let tracker = RecordingTracker()
    let checkout = presenter(tracker)
    checkout.applyCoupon("WELCOME10")
    checkout.selectPayment(.card)
    checkout.selectPayment(.card)  // unchanged: not tracked again
    let orderID = try checkout.placeOrder(email: "ayse@example.com")
    #expect(orderID == "TY-TEST-1")
    #expect(checkout.state.orderID == "TY-TEST-1")
    tracker.expectNames(["coupon_applied", "add_payment_info", "purchase"])
    // 1,100.00 − 110.00 (WELCOME10) + 29.99 shipping; the VAT included in the 990.00 of goods: 165.00.
    let paying: EventParameters = [
      "currency": "TRY", "value": 1019.99, "tax": 165.0, "shipping": 29.99, "coupon": "WELCOME10",
      "payment_type": "card", "items": Self.items,
    ]
    // The recording tracker runs no pipeline: the e-mail is there, marked personal (see below).
    let purchase = (["transaction_id": "TY-TEST-1"] as EventParameters).merging(paying).merging(
      ["email": "ayse@example.com"])
    tracker.expectReceived(
      by: TYService.firebase,
      [
        ("coupon_applied", ["coupon": "WELCOME10", "discount": 110.0]),
        ("add_payment_info", paying),
        ("purchase", purchase),
      ])
    tracker.expectReceived(
      by: TYService.collector,
      [
        ("coupon_applied", ["coupon": "WELCOME10", "discount": 110.0]),
        ("add_payment_info", paying),
        ("purchase", purchase),
      ])
    let completed = try #require(tracker.payloads(for: TYService.mixpanel).last)
    #expect(completed.name == "Order Completed")
    #expect(
      completed.parameters.keys == [
        "Order ID", "Currency", "Revenue", "Tax", "Shipping", "Coupon", "payment_type", "Products",
      ])
    #expect(completed.parameters["Order ID"] == "TY-TEST-1" && completed.parameters["Revenue"] == 1019.99)
    // The e-mail travels marked as personal data, for the privacy stage to drop or hash.
    let order = try #require(tracker.events.last)
    #expect(order.parameters.filter(\.isPersonal).map(\.key) == ["email"])
  }

  @Test func aPlacedOrderIsRefundedWholeOrByLine() throws {
    let tracker = RecordingTracker()
    let checkout = presenter(tracker)
    #expect(!checkout.refund())  // nothing placed yet
    checkout.selectPayment(.wallet)
    try checkout.placeOrder(email: "a@b.co")
    #expect(!checkout.refund(productIDs: ["nope"]))
    #expect(checkout.refund(productIDs: ["P2"]))
    #expect(checkout.refund())
    guard case .list(let items)? = tracker.events.last?.parameters["items"] else {
      Issue.record("the full refund has no items")
      return
    }
    #expect(items.count == 2)
    tracker.expectNames(["add_payment_info", "purchase", "refund", "refund"])
    let refunds = tracker.payloads(for: TYService.collector).suffix(2).map { $0.parameters }
    #expect(refunds.map { $0["value"] } == [100.0, 1129.99])
    #expect(refunds.map { $0["transaction_id"] } == ["TY-TEST-1", "TY-TEST-1"])
    #expect(tracker.payloads(for: TYService.mixpanel).last?.name == "Order Refunded")
  }

  @Test(arguments: [
    (true, PaymentMethod.card as PaymentMethod?, "a@b.co", CheckoutError.emptyCart),
    (false, nil, "a@b.co", .paymentMissing),
    (false, .wallet, "not-an-email", .invalidEmail),
    (false, .wallet, "a b@c.de", .invalidEmail),
    (false, .wallet, "a@b.", .invalidEmail),
  ])
  func orderFailuresAreTrackedWithoutPersonalData(
    empty: Bool, payment: PaymentMethod?, email: String, error: CheckoutError
  ) {
    let tracker = RecordingTracker()
    let checkout = presenter(tracker, cart: empty ? Cart(items: []) : cart)
    if let payment { checkout.selectPayment(payment) }
    #expect(throws: error) { try checkout.placeOrder(email: email) }
    #expect(tracker.events.last?.name == "order_failed")
    #expect(tracker.events.last?.parameters == ["reason": .string(error.reason)])
  }

  @Test func discountsNeverExceedTheSubtotal() {
    #expect(Coupon(code: "BIG", amountOffMinor: 5_000).discount(on: 1_000) == 1_000)
    #expect(Coupon(code: "P", percentOff: 150).discount(on: 1_000) == 1_000)
    #expect(Coupon(code: "N", amountOffMinor: -5).discount(on: 1_000) == 0)
  }
}
