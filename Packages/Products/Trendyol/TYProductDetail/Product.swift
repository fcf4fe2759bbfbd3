public import TYTracker

/// A product as the product detail screen shows it.
public struct Product: Sendable, Hashable {
  /// The catalogue id.
  public var id: String
  /// The product's name.
  public var name: String
  /// The brand.
  public var brand: String
  /// The category path's last part, e.g. `Sneakers`.
  public var category: String
  /// The price in minor units (kuruş), so no rounding ever happens.
  public var priceMinor: Int
  /// ISO 4217 currency code.
  public var currency: String
  /// The sizes on offer; empty for products without sizes.
  public var sizes: [String]
  /// How many are in stock.
  public var stock: Int

  /// Creates a product.
  public init(
    id: String,
    name: String,
    brand: String,
    category: String,
    priceMinor: Int,
    currency: String = "TRY",
    sizes: [String] = [],
    stock: Int
  ) {
    self.id = id
    self.name = name
    self.brand = brand
    self.category = category
    self.priceMinor = priceMinor
    self.currency = currency
    self.sizes = sizes
    self.stock = stock
  }

  /// The price as a decimal number of major units, for analytics values.
  public var price: Double { Double(priceMinor) / 100 }

  /// The product as a commerce item: id, name, brand, category, the size as its variant, the price.
  public func commerceItem(quantity: Int = 1, size: String? = nil) -> CommerceItem {
    CommerceItem(
      id: id, name: name, brand: brand, categories: [category], variant: size, price: price, quantity: quantity)
  }
}
