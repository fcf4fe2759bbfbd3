public import WireJSON

/// The one declaration of how an event states an order, in every vocabulary the collector receives:
/// GA4's (`purchase`, `refund`, `transaction_id`, `value`, `items[].item_id`, what the native and
/// GA4 routes carry), Segment's e-commerce spec (`Order Completed`, `Order Refunded`, `order_id`,
/// `total`/`revenue`, `products[].product_id`/`sku`) and Mixpanel's title case (`Order ID`, `Revenue`,
/// `Products[].Product ID`, what the Mixpanel service sends). Each fact is the first of its keys whose
/// value has the fact's type (a string for ids and names, a number under 10^15 for amounts).
///
/// The SQL engines' ``CommerceSQL`` and the ClickHouse engine (``order(name:eventID:parameters:)``,
/// evaluated at insert) both read these lists, so every engine counts the same orders.
public enum CommerceVocabulary {
  /// Event names that are purchases.
  public static let purchases = ["purchase", "Order Completed"]
  /// Event names that are refunds.
  public static let refunds = ["refund", "Order Refunded"]
  /// A purchase's transaction key (a refund's key is its event id).
  public static let transactionID = ["transaction_id", "order_id", "Order ID"]
  /// Whether events named `name` are orders (purchases or refunds): only those have commerce facts.
  public static func isOrder(_ name: String) -> Bool { purchases.contains(name) || refunds.contains(name) }
  /// The order's currency.
  public static let currency = ["currency", "Currency"]
  /// The order's value: GA4's `value`, Segment's `total` (revenue with tax and shipping), else its
  /// `revenue`, Mixpanel's `Revenue`.
  public static let value = ["value", "total", "revenue", "Revenue"]
  /// The list of items.
  public static let items = ["items", "products", "Products"]
  /// An item's id.
  public static let itemID = ["item_id", "product_id", "sku", "Product ID"]
  /// An item's name (its id when it has none).
  public static let itemName = ["item_name", "name", "Name"]
  /// An item's category (its broadest level).
  public static let category = ["item_category", "category", "Category"]
  /// An item's deeper category levels, broadest first (GA4's `item_category2` … `item_category5`):
  /// an item's stored category is its path, the levels joined by ``categorySeparator``
  /// (`Home > Kitchen`), and a category filter matches any level.
  public static let subcategories = ["item_category2", "item_category3", "item_category4", "item_category5"]
  /// What joins the levels of a category path.
  public static let categorySeparator = " > "
  /// An item's brand.
  public static let brand = ["item_brand", "brand", "Brand"]
  /// An item's unit price.
  public static let price = ["price", "Price"]
  /// An item's quantity (1 when missing; an item under 1 is not counted).
  public static let quantity = ["quantity", "Quantity"]

  /// An order read from an event.
  public struct Order: Sendable, Hashable {
    /// A purchase (else a refund).
    public var purchase: Bool
    /// The transaction key.
    public var key: String
    /// The currency, empty when not said.
    public var currency: String
    /// The value, 0 when not said.
    public var value: Double
    /// The counted items of a purchase.
    public var items: [Item]
  }

  /// An item of a purchase.
  public struct Item: Sendable, Hashable {
    /// Its place in the order's list, from 0.
    public var position: Int
    /// Its id, else its name.
    public var item: String
    /// Its name.
    public var name: String?
    /// Its category path (`Home > Kitchen`).
    public var category: String?
    /// Its brand.
    public var brand: String?
    /// Its unit price.
    public var price: Double?
    /// How many were bought.
    public var quantity: Double
  }

  /// The order the event `name` with `parameters` states, or `nil` when it is neither a purchase
  /// nor a refund.
  public static func order(name: String, eventID: String, parameters: JSONValue) -> Order? {
    guard isOrder(name) else { return nil }
    let purchase = purchases.contains(name)
    var order = Order(
      purchase: purchase, key: purchase ? text(transactionID, parameters) ?? eventID : eventID,
      currency: text(currency, parameters) ?? "", value: amount(value, parameters) ?? 0, items: [])
    guard purchase,
      let list = items.lazy.compactMap({ key -> [JSONValue]? in
        if case .array(let elements)? = parameters[key] { elements } else { nil }
      }).first
    else { return order }
    for (position, element) in list.enumerated() {
      guard case .object = element else { continue }
      guard let item = text(itemID, element) ?? text(itemName, element) else { continue }
      let quantity = amount(self.quantity, element) ?? 1
      guard quantity >= 1 else { continue }
      order.items.append(
        Item(
          position: position, item: item, name: text(itemName, element), category: categoryPath(element),
          brand: text(brand, element), price: amount(price, element), quantity: quantity))
    }
    return order
  }

  /// The item's category path: its category, then each deeper level it gives.
  private static func categoryPath(_ element: JSONValue) -> String? {
    guard let top = text(category, element) else { return nil }
    return ([top] + subcategories.compactMap { element[$0]?.string }).joined(separator: categorySeparator)
  }

  private static func text(_ keys: [String], _ object: JSONValue) -> String? {
    keys.lazy.compactMap { object[$0]?.string }.first
  }

  private static func amount(_ keys: [String], _ object: JSONValue) -> Double? {
    keys.lazy.compactMap { object[$0]?.amount }.first
  }
}
