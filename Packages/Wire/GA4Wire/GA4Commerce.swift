extension GA4Limits {
  /// Elements of one event's `items`; GA4 ignores the ones after (Firebase, "Measure ecommerce").
  public static let maximumItemsPerEvent = 200
  /// Custom parameters of one item, besides the documented item parameters.
  public static let maximumCustomItemParameters = 27

  /// The documented item parameters (GA4 events reference, `items`); any other is custom.
  public static let itemParameterNames: Set<String> = [
    "item_id", "item_name", "affiliation", "coupon", "discount", "index", "item_brand", "item_category",
    "item_category2", "item_category3", "item_category4", "item_category5", "item_list_id", "item_list_name",
    "item_variant", "location_id", "price", "quantity", "promotion_id", "promotion_name", "creative_name",
    "creative_slot",
  ]

  /// The recommended ecommerce events, where `currency` is required with `value`.
  public static let ecommerceEventNames: Set<String> = [
    "add_payment_info", "add_shipping_info", "add_to_cart", "add_to_wishlist", "begin_checkout", "purchase",
    "refund", "remove_from_cart", "select_item", "select_promotion", "view_cart", "view_item", "view_item_list",
    "view_promotion",
  ]
}

extension GA4Rules {
  /// The violation of a list of items at `path` (`events[0].params.items`) by its length, or `nil`.
  public static func checkItemCount(_ count: Int, path: @autoclosure () -> String) -> GA4Violation? {
    checkCount(count, limit: GA4Limits.maximumItemsPerEvent, what: "items", path: path())
  }

  /// The violation of an item without `item_id` and `item_name`, or `nil`.
  public static func checkItemIdentity(_ item: GA4Item, path: @autoclosure () -> String) -> GA4Violation? {
    func present(_ key: String) -> Bool {
      guard let value = item[key] else { return false }
      if case .string(let text) = value { return !text.isEmpty }
      return true
    }
    guard !present("item_id"), !present("item_name") else { return nil }
    return GA4Violation(fieldPath: path(), code: .valueRequired, message: "an item needs item_id or item_name")
  }

  /// The violation of an item's `quantity` that is not a whole number of at least 1, or `nil`.
  public static func checkItemQuantity(_ item: GA4Item, path: @autoclosure () -> String) -> GA4Violation? {
    guard let quantity = item["quantity"] else { return nil }
    if case .int(let units) = quantity, units >= 1 { return nil }
    return GA4Violation(
      fieldPath: path() + ".quantity", code: .valueInvalid, message: "quantity is a whole number of at least 1")
  }

  /// The violation of an ecommerce event with a `value` and no `currency`, or `nil`.
  public static func checkCurrency(
    eventName: String, hasValue: Bool, hasCurrency: Bool, path: @autoclosure () -> String
  ) -> GA4Violation? {
    guard hasValue, !hasCurrency, GA4Limits.ecommerceEventNames.contains(eventName) else { return nil }
    return GA4Violation(
      fieldPath: path(), code: .valueRequired, message: "currency is required with value in \(eventName)")
  }

  /// The violation of an `items` parameter that is not a list of items, or `nil`.
  public static func checkItemsValue(_ name: String, _ value: GA4Value, path: @autoclosure () -> String)
    -> GA4Violation?
  {
    guard name == "items" else { return nil }
    if case .items = value { return nil }
    return GA4Violation(fieldPath: path(), code: .valueInvalid, message: "items is a list of objects")
  }

  /// The violation of `items` under a parameter other than `items`, or `nil`: only `items` holds a list.
  public static func checkListParameter(_ name: String, path: @autoclosure () -> String) -> GA4Violation? {
    guard name != "items" else { return nil }
    return GA4Violation(fieldPath: path(), code: .valueInvalid, message: "only items may hold a list")
  }

  /// Every violation of one item at `path` (`events[0].params.items[2]`): its identity, the names
  /// and values of its parameters, nested lists, and the count of custom parameters.
  public static func itemViolations(_ item: GA4Item, path: String) -> [GA4Violation] {
    var violations: [GA4Violation] = []
    if let violation = checkItemIdentity(item, path: path) { violations.append(violation) }
    if let violation = checkItemQuantity(item, path: path) { violations.append(violation) }
    var custom = 0
    for (name, value) in item.sorted(by: { $0.key < $1.key }) {
      let parameterPath = "\(path).\(name)"
      if let violation = checkName(name, kind: .parameter, path: parameterPath) { violations.append(violation) }
      if !GA4Limits.itemParameterNames.contains(name) { custom += 1 }
      switch value {
      case .string(let text):
        if let violation = checkParameterValue(text, path: parameterPath) { violations.append(violation) }
      case .items:
        violations.append(
          GA4Violation(fieldPath: parameterPath, code: .valueInvalid, message: "an item parameter is not a list"))
      case .int, .double, .bool:
        break
      }
    }
    if let violation = checkCount(
      custom, limit: GA4Limits.maximumCustomItemParameters, what: "custom item parameters", path: path)
    {
      violations.append(violation)
    }
    return violations
  }
}
