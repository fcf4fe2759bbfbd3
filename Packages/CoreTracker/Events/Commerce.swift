/// One product line of a commerce event: what GA4 calls an item.
///
/// Its ``parameters`` use GA4's item keys (`item_id`, `item_name`, `item_brand`,
/// `item_category` … `item_category5`, `item_variant`, `price`, `quantity`, `coupon`, `discount`,
/// `index`), the de-facto vocabulary of e-commerce analytics; services rename where their vendor
/// wants other names. Custom fields follow in their order.
///
/// ```swift
/// let item = CommerceItem(id: "SKU-1", name: "Sneaker", brand: "Trendyol", categories: ["Shoes", "Men"],
///                         price: 49.90, quantity: 2, custom: ["size": "42"])
/// ```
public struct CommerceItem: Sendable, Hashable {
  /// The product's id (`item_id`); an item needs an id or a name.
  public var id: String?
  /// The product's name (`item_name`).
  public var name: String?
  /// The brand (`item_brand`).
  public var brand: String?
  /// Category levels from the broadest: `item_category`, `item_category2` … `item_category5`.
  public var categories: [String]
  /// The variant, e.g. a size or colour (`item_variant`).
  public var variant: String?
  /// The unit price after discount, in the order's currency (`price`).
  public var price: Double?
  /// How many units (`quantity`).
  public var quantity: Int?
  /// The item's own coupon (`coupon`).
  public var coupon: String?
  /// The unit discount (`discount`).
  public var discount: Double?
  /// The position in a list (`index`).
  public var index: Int?
  /// Further fields, after the standard ones.
  public var custom: EventParameters

  /// Creates an item.
  public init(
    id: String? = nil, name: String? = nil, brand: String? = nil, categories: [String] = [],
    variant: String? = nil, price: Double? = nil, quantity: Int? = nil, coupon: String? = nil,
    discount: Double? = nil, index: Int? = nil, custom: EventParameters = EventParameters()
  ) {
    self.id = id
    self.name = name
    self.brand = brand
    self.categories = categories
    self.variant = variant
    self.price = price
    self.quantity = quantity
    self.coupon = coupon
    self.discount = discount
    self.index = index
    self.custom = custom
  }

  /// The item as ordered `(key, value)` pairs with GA4's item keys.
  public var parameters: EventParameters {
    var fields = CommerceFields(capacity: 10 + categories.count + custom.count)
    fields.add("item_id", id.map(ParameterValue.string))
    fields.add("item_name", name.map(ParameterValue.string))
    fields.add("item_brand", brand.map(ParameterValue.string))
    for (level, category) in categories.prefix(5).enumerated() {
      fields.add(CommerceFields.categoryKeys[level], .string(category))
    }
    fields.add("item_variant", variant.map(ParameterValue.string))
    fields.add("price", price.map(ParameterValue.double))
    fields.add("quantity", quantity.map(ParameterValue.int))
    fields.add("coupon", coupon.map(ParameterValue.string))
    fields.add("discount", discount.map(ParameterValue.double))
    fields.add("index", index.map(ParameterValue.int))
    fields.addCustom(custom)
    return fields.parameters
  }

  /// The item as one structured value (an object).
  public var value: ParameterValue { .object(parameters) }
}

/// The money side of a commerce event: a cart, a checkout step, a purchase or a refund.
///
/// ``parameters`` use GA4's keys (`transaction_id`, `currency`, `value`, `tax`, `shipping`,
/// `coupon`, `items`). `value` defaults to the items' total (price × quantity), so a feature states
/// the cart and the arithmetic stays in one place.
///
/// ```swift
/// let order = CommerceOrder(transactionID: "T-1001", currency: "TRY", items: cart.items, tax: 18, shipping: 29.99)
/// tracker.track(CheckoutEvent.purchased(order))   // parameters: order.parameters
/// ```
public struct CommerceOrder: Sendable, Hashable {
  /// The order's id (`transaction_id`), required for purchases and refunds.
  public var transactionID: String?
  /// The ISO 4217 currency code (`currency`), e.g. `TRY`.
  public var currency: String
  /// The products.
  public var items: [CommerceItem]
  /// The monetary value (`value`); `nil` means the items' total, and an order with neither a value
  /// nor items (a full refund by its transaction id) sends none rather than a made-up 0.
  public var value: Double?
  /// Tax (`tax`).
  public var tax: Double?
  /// Shipping cost (`shipping`).
  public var shipping: Double?
  /// The order's coupon (`coupon`).
  public var coupon: String?
  /// Further fields, after the standard ones (e.g. `payment_type` for `add_payment_info`).
  public var custom: EventParameters

  /// Creates an order.
  public init(
    transactionID: String? = nil, currency: String, items: [CommerceItem], value: Double? = nil,
    tax: Double? = nil, shipping: Double? = nil, coupon: String? = nil, custom: EventParameters = EventParameters()
  ) {
    self.transactionID = transactionID
    self.currency = currency
    self.items = items
    self.value = value
    self.tax = tax
    self.shipping = shipping
    self.coupon = coupon
    self.custom = custom
  }

  /// The items' total: the sum of price × quantity (a missing quantity counts 1, a missing price 0).
  public var itemsTotal: Double {
    items.reduce(0) { $0 + ($1.price ?? 0) * Double($1.quantity ?? 1) }
  }

  /// The value the order states: ``value``, else the items' total; `nil` with neither.
  public var statedValue: Double? { value ?? (items.isEmpty ? nil : itemsTotal) }

  /// The order as ordered `(key, value)` pairs with GA4's keys, `items` last.
  public var parameters: EventParameters {
    var fields = CommerceFields(capacity: 7 + custom.count)
    fields.add("transaction_id", transactionID.map(ParameterValue.string))
    fields.add("currency", .string(currency))
    fields.add("value", statedValue.map(ParameterValue.double))
    fields.add("tax", tax.map(ParameterValue.double))
    fields.add("shipping", shipping.map(ParameterValue.double))
    fields.add("coupon", coupon.map(ParameterValue.string))
    fields.addCustom(custom)
    fields.add("items", .list(items.map(\.value)))
    return fields.parameters
  }
}

/// The fields of an item or an order, built in one pass: the standard keys are distinct, so they
/// are appended without the look-up ``EventParameters`` does on every set; custom fields whose key
/// is taken are left out.
struct CommerceFields {
  private var storage: [EventParameter] = []

  /// `item_category`, `item_category2` … `item_category5`.
  static let categoryKeys = ["item_category", "item_category2", "item_category3", "item_category4", "item_category5"]

  init(capacity: Int) { storage.reserveCapacity(capacity) }

  mutating func add(_ key: String, _ value: ParameterValue?) {
    if let value { storage.append(EventParameter(key: key, value: value)) }
  }

  mutating func addCustom(_ custom: EventParameters) {
    for field in custom where !storage.contains(where: { $0.key == field.key }) { storage.append(field) }
  }

  var parameters: EventParameters { EventParameters(distinct: storage) }
}

/// The key style of a commerce event's parameters: GA4's snake-case keys (the uniform
/// serialisation, ``CommerceOrder/parameters``), or the title-case property style of Mixpanel
/// projects (`Order ID`, `Revenue`, `Products` with `Product ID`, `Price`, `Quantity`), which a
/// feature gives Mixpanel in its ``CoreTrackable/payload(for:)``.
public enum CommerceStyle: Sendable, Hashable {
  /// `transaction_id`, `value`, `items` with `item_id` …: GA4's vocabulary.
  case ga4
  /// `Order ID`, `Revenue`, `Products` with `Product ID` …: Mixpanel's property style.
  case titleCase
}

extension CommerceItem {
  /// The item's fields in `style` (custom fields keep their keys).
  public func parameters(style: CommerceStyle) -> EventParameters {
    guard style == .titleCase else { return parameters }
    var fields = EventParameters()
    fields["Product ID"] = id.map(ParameterValue.string)
    fields["Name"] = name.map(ParameterValue.string)
    fields["Brand"] = brand.map(ParameterValue.string)
    fields["Category"] = categories.isEmpty ? nil : .string(categories.joined(separator: " > "))
    fields["Variant"] = variant.map(ParameterValue.string)
    fields["Price"] = price.map(ParameterValue.double)
    fields["Quantity"] = quantity.map(ParameterValue.int)
    fields["Coupon"] = coupon.map(ParameterValue.string)
    fields["Discount"] = discount.map(ParameterValue.double)
    fields["Position"] = index.map(ParameterValue.int)
    for field in custom where fields[field.key] == nil { fields.set(field) }
    return fields
  }
}

extension CommerceOrder {
  /// The order's fields in `style`, the products last (custom fields keep their keys).
  public func parameters(style: CommerceStyle) -> EventParameters {
    guard style == .titleCase else { return parameters }
    var fields = EventParameters()
    fields["Order ID"] = transactionID.map(ParameterValue.string)
    fields["Currency"] = .string(currency)
    fields["Revenue"] = statedValue.map(ParameterValue.double)
    fields["Tax"] = tax.map(ParameterValue.double)
    fields["Shipping"] = shipping.map(ParameterValue.double)
    fields["Coupon"] = coupon.map(ParameterValue.string)
    for field in custom where fields[field.key] == nil { fields.set(field) }
    fields["Products"] = .list(items.map { .object($0.parameters(style: .titleCase)) })
    return fields
  }
}
