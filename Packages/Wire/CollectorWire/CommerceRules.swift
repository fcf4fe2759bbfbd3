/// The rules of the native batch for the commerce vocabulary (GA4's keys, which `CommerceOrder`
/// writes): an event's `items` is a list of objects, and in each item `quantity` (when given) is a
/// whole number of at least 1 and `price` a number. An event breaking one is rejected alone, with the
/// path (`events[3].parameters.items[2].quantity`); the reports could not count it.
public enum CommerceRules {
  /// Where in `items` (relative to it, `[2].quantity`) a rule is broken and why, or `nil`.
  public static func problem(inItems items: CollectorValue) -> (path: String, reason: String)? {
    guard case .list(let elements) = items else { return ("", "must be a list of items (objects)") }
    for (position, element) in elements.enumerated() {
      guard case .object(let fields) = element else { return ("[\(position)]", "must be an item (an object)") }
      if let quantity = fields["quantity"] {
        guard case .int(let units) = quantity, units >= 1 else {
          return ("[\(position)].quantity", "must be a whole number of at least 1")
        }
      }
      if let price = fields["price"] {
        switch price {
        case .int, .double: break
        default: return ("[\(position)].price", "must be a number")
        }
      }
    }
    return nil
  }
}
