public import TYTracker

/// What the checkout screen tracks.
///
/// The receipt e-mail travels as personal data: the privacy stage drops or hashes it before any
/// service sees it. Firebase gets GA4's `begin_checkout`, `add_payment_info` and `purchase`.
public enum CheckoutEvent: CoreTrackable, Equatable {
  case viewed(Cart)
  case couponApplied(code: String, discountMinor: Int)
  case couponRejected(code: String, reason: String)
  case paymentSelected(PaymentMethod)
  case orderPlaced(orderID: String, cart: Cart, totalMinor: Int, payment: PaymentMethod, email: String)
  case orderFailed(reason: String)

  public var name: String {
    switch self {
    case .viewed: "checkout_viewed"
    case .couponApplied: "coupon_applied"
    case .couponRejected: "coupon_rejected"
    case .paymentSelected: "payment_selected"
    case .orderPlaced: "order_placed"
    case .orderFailed: "order_failed"
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
    case .viewed(let cart):
      [
        "item_count": .int(cart.unitCount), "subtotal": .double(Double(cart.subtotalMinor) / 100),
        "currency": .string(cart.currency),
      ]
    case .couponApplied(let code, let discount):
      ["coupon": .string(code), "discount": .double(Double(discount) / 100)]
    case .couponRejected(let code, let reason):
      ["coupon": .string(code), "reason": .string(reason)]
    case .paymentSelected(let method):
      ["payment_method": .string(method.rawValue)]
    case .orderPlaced(let orderID, let cart, let total, let payment, let email):
      {
        var parameters: EventParameters = [
          "order_id": .string(orderID), "item_count": .int(cart.unitCount),
          "total": .double(Double(total) / 100), "currency": .string(cart.currency),
          "payment_method": .string(payment.rawValue),
        ]
        parameters.append(personal: "email", .string(email))
        return parameters
      }()
    case .orderFailed(let reason):
      ["reason": .string(reason)]
    }
  }

  public func payload(for service: ServiceID) -> ServicePayload? {
    guard service == TYService.firebase else { return nil }
    switch self {
    case .viewed(let cart):
      return ServicePayload(
        name: "begin_checkout",
        parameters: ["currency": .string(cart.currency), "value": .double(Double(cart.subtotalMinor) / 100)]
      )
    case .paymentSelected(let method):
      return ServicePayload(name: "add_payment_info", parameters: ["payment_type": .string(method.rawValue)])
    case .orderPlaced(let orderID, let cart, let total, _, _):
      return ServicePayload(
        name: "purchase",
        parameters: [
          "transaction_id": .string(orderID), "currency": .string(cart.currency),
          "value": .double(Double(total) / 100),
        ]
      )
    default:
      return nil
    }
  }
}
