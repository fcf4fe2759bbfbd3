public import TYTracker

/// What the checkout screen tracks.
///
/// The checkout, the payment step and the purchase carry the whole order (``CommerceOrder``): every
/// cart line as an item, the coupon, tax and shipping. The uniform serialisation uses GA4's
/// vocabulary (`add_payment_info`, `purchase` and `refund` are GA4's own names, so the collector's
/// revenue report counts the purchase and subtracts the refund), Firebase gets `begin_checkout` for the checkout screen, Mixpanel
/// title-case names and properties. The receipt e-mail travels as personal data: the privacy stage
/// drops or hashes it before any service sees it.
public enum CheckoutEvent: CoreTrackable, Equatable {
  case viewed(CommerceOrder)
  case couponApplied(code: String, discountMinor: Int)
  case couponRejected(code: String, reason: String)
  case paymentSelected(PaymentMethod, order: CommerceOrder)
  case orderPlaced(CommerceOrder, email: String)
  case orderFailed(reason: String)
  case refunded(CommerceOrder)

  public var name: String {
    switch self {
    case .viewed: "checkout_viewed"
    case .couponApplied: "coupon_applied"
    case .couponRejected: "coupon_rejected"
    case .paymentSelected: "add_payment_info"
    case .orderPlaced: "purchase"
    case .orderFailed: "order_failed"
    case .refunded: "refund"
    }
  }

  public var kind: EventKind {
    switch self {
    case .viewed: .screenView
    case .orderFailed, .couponRejected: .event
    default: .action
    }
  }

  public var parameters: EventParameters {
    switch self {
    case .viewed(let order):
      order.parameters
    case .couponApplied(let code, let discount):
      ["coupon": .string(code), "discount": .double(Double(discount) / 100)]
    case .couponRejected(let code, let reason):
      ["coupon": .string(code), "reason": .string(reason)]
    case .paymentSelected(_, let order):
      order.parameters
    case .orderPlaced(let order, let email):
      {
        var parameters = order.parameters
        parameters.append(personal: "email", .string(email))
        return parameters
      }()
    case .orderFailed(let reason):
      ["reason": .string(reason)]
    case .refunded(let order):
      order.parameters
    }
  }

  public func payload(for service: ServiceID) -> ServicePayload? {
    switch (self, service) {
    case (.viewed(let order), TYService.firebase):
      ServicePayload(name: "begin_checkout", parameters: order.parameters)
    case (.viewed(let order), TYService.mixpanel):
      ServicePayload(name: "Checkout Started", parameters: order.parameters(style: .titleCase))
    case (.paymentSelected(_, let order), TYService.mixpanel):
      ServicePayload(name: "Payment Info Entered", parameters: order.parameters(style: .titleCase))
    case (.orderPlaced(let order, _), TYService.mixpanel):
      ServicePayload(name: "Order Completed", parameters: order.parameters(style: .titleCase))
    case (.refunded(let order), TYService.mixpanel):
      ServicePayload(name: "Order Refunded", parameters: order.parameters(style: .titleCase))
    default:
      nil
    }
  }
}
