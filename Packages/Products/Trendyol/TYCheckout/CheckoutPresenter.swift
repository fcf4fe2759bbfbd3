public import TYTracker

/// Why an order could not be placed.
public enum CheckoutError: Error, Equatable, Sendable {
  /// The cart has no items.
  case emptyCart
  /// No payment method was chosen.
  case paymentMissing
  /// The receipt e-mail is missing or malformed.
  case invalidEmail

  /// A short reason, as tracked.
  public var reason: String {
    switch self {
    case .emptyCart: "empty_cart"
    case .paymentMissing: "payment_missing"
    case .invalidEmail: "invalid_email"
    }
  }
}

/// What the checkout view shows.
public struct CheckoutViewState: Sendable, Equatable {
  /// Sum of the lines, minor units.
  public var subtotalMinor: Int
  /// The coupon's discount, minor units.
  public var discountMinor: Int
  /// What the user pays (after the discount, with shipping), minor units.
  public var totalMinor: Int
  /// The applied coupon's code.
  public var couponCode: String?
  /// The chosen payment method.
  public var payment: PaymentMethod?
  /// The placed order's id, once placed.
  public var orderID: String?
  /// A message after a failed action.
  public var message: String?
}

/// The checkout screen's logic: coupons, payment, the receipt e-mail and placing the order.
///
/// ```swift
/// let checkout = CheckoutPresenter(cart: cart)  // TYTracker.shared
/// checkout.viewDidAppear()
/// checkout.applyCoupon("WELCOME10")
/// checkout.selectPayment(.card)
/// let orderID = try checkout.placeOrder(email: "ayse@example.com")
/// ```
public final class CheckoutPresenter {
  /// The cart being checked out.
  public let cart: Cart
  /// What the view shows now.
  public private(set) var state: CheckoutViewState
  private let coupons: [String: Coupon]
  private let makeOrderID: () -> String
  private let tracker: any CoreTracker

  /// Coupons every checkout knows.
  public static let standardCoupons: [Coupon] = [
    Coupon(code: "WELCOME10", percentOff: 10),
    Coupon(code: "SAVE50", amountOffMinor: 50_00, minimumSubtotalMinor: 500_00),
  ]

  /// Creates the presenter; `tracker` defaults to Trendyol's shared tracker.
  public init(
    cart: Cart,
    coupons: [Coupon] = CheckoutPresenter.standardCoupons,
    makeOrderID: @escaping () -> String = CheckoutPresenter.randomOrderID,
    tracker: any CoreTracker = TYTracker.shared
  ) {
    self.cart = cart
    self.coupons = Dictionary(coupons.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })
    self.makeOrderID = makeOrderID
    self.tracker = tracker
    state = CheckoutViewState(
      subtotalMinor: cart.subtotalMinor,
      discountMinor: 0,
      totalMinor: cart.subtotalMinor + cart.shippingMinor
    )
  }

  /// The screen appeared.
  public func viewDidAppear() {
    tracker.track(CheckoutEvent.viewed(order()))
  }

  /// The cart as an order at the current total, coupon and payment method.
  func order(transactionID: String? = nil) -> CommerceOrder {
    cart.order(
      transactionID: transactionID, totalMinor: state.totalMinor, coupon: state.couponCode,
      custom: state.payment.map { ["payment_type": .string($0.rawValue)] } ?? EventParameters())
  }

  /// Applies a coupon code (case-insensitive, surrounding spaces ignored); returns whether it applied.
  @discardableResult
  public func applyCoupon(_ code: String) -> Bool {
    let normalized = String(code.filter { !$0.isWhitespace }).uppercased()
    let rejection: String? =
      if let coupon = coupons[normalized] {
        cart.subtotalMinor < coupon.minimumSubtotalMinor ? "minimum_not_reached" : nil
      } else {
        "unknown_code"
      }
    if let rejection {
      state.message = rejection == "unknown_code" ? "This code is not valid" : "Your cart is below the coupon's minimum"
      tracker.track(CheckoutEvent.couponRejected(code: normalized, reason: rejection))
      return false
    }
    let discount = coupons[normalized]!.discount(on: cart.subtotalMinor)
    state.couponCode = normalized
    state.discountMinor = discount
    state.totalMinor = cart.subtotalMinor - discount + cart.shippingMinor
    state.message = nil
    tracker.track(CheckoutEvent.couponApplied(code: normalized, discountMinor: discount))
    return true
  }

  /// Chooses the payment method.
  public func selectPayment(_ method: PaymentMethod) {
    guard state.payment != method else { return }
    state.payment = method
    tracker.track(CheckoutEvent.paymentSelected(method, order: order()))
  }

  /// Places the order and returns its id; a failure is tracked (without the e-mail) and thrown.
  @discardableResult
  public func placeOrder(email: String) throws(CheckoutError) -> String {
    let error: CheckoutError? =
      if cart.items.isEmpty {
        .emptyCart
      } else if state.payment == nil {
        .paymentMissing
      } else if !Self.isPlausibleEmail(email) {
        .invalidEmail
      } else {
        nil
      }
    if let error {
      state.message = "Could not place the order (\(error.reason))"
      tracker.track(CheckoutEvent.orderFailed(reason: error.reason))
      throw error
    }
    let orderID = makeOrderID()
    state.orderID = orderID
    state.message = "Order \(orderID) placed"
    tracker.track(CheckoutEvent.orderPlaced(order(transactionID: orderID), email: email))
    return orderID
  }

  /// Refunds the placed order: every line, or the lines of `productIDs`; the refund's value is
  /// what those lines cost (the whole total, shipping included, for a full refund). Returns `false`,
  /// tracking nothing, before an order is placed or when no line matches.
  @discardableResult
  public func refund(productIDs: Set<String>? = nil) -> Bool {
    guard let orderID = state.orderID else { return false }
    let placed = order(transactionID: orderID)
    guard let productIDs else {
      tracker.track(
        CheckoutEvent.refunded(
          CommerceOrder(
            transactionID: orderID, currency: placed.currency, items: placed.items, value: placed.value)))
      return true
    }
    let lines = placed.items.filter { $0.id.map(productIDs.contains) ?? false }
    guard !lines.isEmpty else { return false }
    let refund = CommerceOrder(transactionID: orderID, currency: placed.currency, items: lines)
    tracker.track(CheckoutEvent.refunded(refund))
    return true
  }

  /// `local@domain.tld`, no spaces: enough to catch typing mistakes.
  static func isPlausibleEmail(_ email: String) -> Bool {
    let parts = email.split(separator: "@", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, !email.contains(where: \.isWhitespace) else { return false }
    let domain = parts[1].split(separator: ".", omittingEmptySubsequences: false)
    return domain.count >= 2 && domain.allSatisfy { !$0.isEmpty }
  }

  /// An order id like `TY-4F2A9C01`.
  public static func randomOrderID() -> String {
    "TY-" + String(UInt32.random(in: 0...UInt32.max), radix: 16, uppercase: true)
  }
}
