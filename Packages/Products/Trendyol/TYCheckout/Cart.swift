/// One line of the cart.
public struct CartItem: Sendable, Hashable {
  /// The catalogue id.
  public var productID: String
  /// The product's name.
  public var name: String
  /// The unit price in minor units.
  public var unitPriceMinor: Int
  /// How many.
  public var quantity: Int

  /// Creates a cart line.
  public init(productID: String, name: String, unitPriceMinor: Int, quantity: Int) {
    self.productID = productID
    self.name = name
    self.unitPriceMinor = unitPriceMinor
    self.quantity = quantity
  }

  /// Unit price × quantity.
  public var totalMinor: Int { unitPriceMinor * quantity }
}

/// The cart at checkout.
public struct Cart: Sendable, Hashable {
  /// The lines, in the order they were added.
  public var items: [CartItem]
  /// ISO 4217 currency code.
  public var currency: String

  /// Creates a cart.
  public init(items: [CartItem], currency: String = "TRY") {
    self.items = items
    self.currency = currency
  }

  /// The sum of the lines, in minor units.
  public var subtotalMinor: Int { items.reduce(0) { $0 + $1.totalMinor } }
  /// How many units in all.
  public var unitCount: Int { items.reduce(0) { $0 + $1.quantity } }
}

/// How the user pays.
public enum PaymentMethod: String, Sendable, CaseIterable {
  case card, wallet
  case cashOnDelivery = "cash_on_delivery"
}

/// A coupon's rule: a percentage or a fixed amount off, above a minimum subtotal.
public struct Coupon: Sendable, Hashable {
  /// The code the user types.
  public var code: String
  /// Percent off (0–100), or `nil` for a fixed amount.
  public var percentOff: Int?
  /// Fixed amount off in minor units (used when `percentOff` is `nil`).
  public var amountOffMinor: Int
  /// The subtotal the cart must reach, in minor units.
  public var minimumSubtotalMinor: Int

  /// Creates a coupon.
  public init(code: String, percentOff: Int? = nil, amountOffMinor: Int = 0, minimumSubtotalMinor: Int = 0) {
    self.code = code
    self.percentOff = percentOff
    self.amountOffMinor = amountOffMinor
    self.minimumSubtotalMinor = minimumSubtotalMinor
  }

  /// The discount on `subtotal`, never more than the subtotal.
  public func discount(on subtotalMinor: Int) -> Int {
    let raw = percentOff.map { subtotalMinor * $0 / 100 } ?? amountOffMinor
    return min(subtotalMinor, max(0, raw))
  }
}
