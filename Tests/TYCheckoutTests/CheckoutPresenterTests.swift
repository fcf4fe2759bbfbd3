import CoreTrackerTesting
import TYCheckout
import TYTracker
import Testing

@Suite("Trendyol checkout")
struct CheckoutPresenterTests {
  let cart = Cart(items: [
    CartItem(productID: "P1", name: "Air Runner", unitPriceMinor: 1_000_00, quantity: 1),
    CartItem(productID: "P2", name: "Socks", unitPriceMinor: 50_00, quantity: 2),
  ])

  private func presenter(_ tracker: any CoreTracker, cart: Cart? = nil) -> CheckoutPresenter {
    CheckoutPresenter(cart: cart ?? self.cart, makeOrderID: { "TY-TEST-1" }, tracker: tracker)
  }

  @Test func viewingTracksTheCart() {
    let tracker = RecordingTracker()
    presenter(tracker).viewDidAppear()
    tracker.expectReceived(
      by: TYService.collector, [("checkout_viewed", ["item_count": 3, "subtotal": 1100.0, "currency": "TRY"])])
    tracker.expectReceived(by: TYService.firebase, [("begin_checkout", ["currency": "TRY", "value": 1100.0])])
  }

  @Test(arguments: [
    ("WELCOME10", true, 110_00), (" welcome10 ", true, 110_00), ("SAVE50", true, 50_00), ("BOGUS", false, 0),
  ])
  func couponsApplyOrAreRejectedWithAReason(code: String, applies: Bool, discount: Int) {
    let tracker = RecordingTracker()
    let checkout = presenter(tracker)
    #expect(checkout.applyCoupon(code) == applies)
    #expect(checkout.state.discountMinor == discount)
    #expect(checkout.state.totalMinor == cart.subtotalMinor - discount)
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
    tracker.expectNames(["coupon_applied", "payment_selected", "order_placed"])
    tracker.expectReceived(
      by: TYService.firebase,
      [
        ("coupon_applied", ["coupon": "WELCOME10", "discount": 110.0]),
        ("add_payment_info", ["payment_type": "card"]),
        ("purchase", ["transaction_id": "TY-TEST-1", "currency": "TRY", "value": 990.0]),
      ])
    // The e-mail travels marked as personal data, for the privacy stage to drop or hash.
    let order = try #require(tracker.events.last)
    #expect(order.parameters.filter(\.isPersonal).map(\.key) == ["email"])
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
