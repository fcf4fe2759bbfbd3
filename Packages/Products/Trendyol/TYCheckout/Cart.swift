public import TYTracker

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
  /// The brand, if known.
  public var brand: String?
  /// The category path from the broadest, e.g. `["Shoes", "Sneakers"]`.
  public var categories: [String]
  /// The chosen size or colour, if any.
  public var variant: String?

  /// Creates a cart line.
  public init(
    productID: String, name: String, unitPriceMinor: Int, quantity: Int, brand: String? = nil,
    categories: [String] = [], variant: String? = nil
  ) {
    self.productID = productID
    self.name = name
    self.unitPriceMinor = unitPriceMinor
    self.quantity = quantity
    self.brand = brand
    self.categories = categories
    self.variant = variant
  }

  /// Unit price × quantity.
  public var totalMinor: Int { unitPriceMinor * quantity }

  /// The line as a commerce item at position `index` of the cart.
  public func commerceItem(index: Int) -> CommerceItem {
    CommerceItem(
      id: productID, name: name, brand: brand, categories: categories, variant: variant,
      price: Double(unitPriceMinor) / 100, quantity: quantity, index: index)
  }
}

/// The cart at checkout.
public struct Cart: Sendable, Hashable {
  /// The lines, in the order they were added.
  public var items: [CartItem]
  /// ISO 4217 currency code.
  public var currency: String

  /// Shipping, in minor units.
  public var shippingMinor: Int
  /// The VAT rate included in the prices, in percent (Turkish KDV: 20).
  public var includedTaxPercent: Int

  /// Creates a cart.
  public init(items: [CartItem], currency: String = "TRY", shippingMinor: Int = 0, includedTaxPercent: Int = 20) {
    self.items = items
    self.currency = currency
    self.shippingMinor = shippingMinor
    self.includedTaxPercent = includedTaxPercent
  }

  /// The cart as an order of `totalMinor` (after discount and with shipping): its items in order,
  /// the tax included in the goods, the shipping and the coupon.
  public func order(
    transactionID: String? = nil, totalMinor: Int, coupon: String?, custom: EventParameters = EventParameters()
  ) -> CommerceOrder {
    let goods = max(0, totalMinor - shippingMinor)
    let taxMinor = goods * includedTaxPercent / (100 + max(0, includedTaxPercent))
    return CommerceOrder(
      transactionID: transactionID, currency: currency,
      items: items.enumerated().map { $1.commerceItem(index: $0) }, value: Double(totalMinor) / 100,
      tax: Double(taxMinor) / 100, shipping: Double(shippingMinor) / 100, coupon: coupon, custom: custom)
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
