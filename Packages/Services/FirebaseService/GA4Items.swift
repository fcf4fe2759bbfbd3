import CoreTracker
import GA4Wire
import ServiceSupport

/// Structured values as GA4 takes them: only `items`, a list of at most 200 objects of scalar item
/// parameters, each with `item_id` or `item_name` and at most 27 custom parameters (see
/// ``GA4Limits``). Everything else structured breaks a rule.
///
/// Repairs (counted by reason): items past the 200th left out (`items_left_out`), an item without
/// an id or a name, with a quantity below 1, or that is not an object left out (`item_left_out`), a bad item parameter name
/// repaired or left out, a value cut to 100 characters (`item_parameter_value_truncated`), a nested
/// value or a custom parameter past the 27th left out (`item_parameter_left_out`). A list or object
/// under another name is left out (`parameter_left_out`).
extension GA4Mapper {
  /// The GA4 value of the structured parameter `key`, or `nil` when it is left out.
  static func structured(
    _ value: ParameterValue, key: String, path: String, _ ledger: inout LimitLedger<GA4Violation>
  ) -> GA4Value? {
    guard case .list(var elements) = value, GA4Rules.checkListParameter(key, path: path) == nil else {
      let violation =
        GA4Rules.checkListParameter(key, path: path)
        ?? GA4Violation(fieldPath: path, code: .valueInvalid, message: "items is a list of objects")
      ledger.leaveOut(violation, as: "parameter_left_out")
      return nil
    }
    if let violation = GA4Rules.checkItemCount(elements.count, path: path),
      ledger.fix(violation, (), as: "items_left_out") != nil
    {
      elements.removeLast(elements.count - GA4Limits.maximumItemsPerEvent)
    }
    var items: [GA4Item] = []
    items.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      // Built only when a rule is broken (the rules take it as an autoclosure).
      func itemPath() -> String { "\(path)[\(index)]" }
      guard case .object(let fields) = element else {
        ledger.leaveOut(
          GA4Violation(fieldPath: itemPath(), code: .valueInvalid, message: "an item is an object"),
          as: "item_left_out")
        continue
      }
      let item = Self.item(fields, path: itemPath, &ledger)
      if let violation = GA4Rules.checkItemIdentity(item, path: itemPath())
        ?? GA4Rules.checkItemQuantity(item, path: itemPath())
      {
        ledger.leaveOut(violation, as: "item_left_out")
        continue
      }
      items.append(item)
    }
    return .items(items)
  }

  /// One item's parameters, each checked (name, value, custom count).
  private static func item(
    _ fields: EventParameters, path: () -> String, _ ledger: inout LimitLedger<GA4Violation>
  ) -> GA4Item {
    var item = GA4Item(minimumCapacity: fields.count)
    var custom = 0
    for field in fields {
      func fieldPath() -> String { "\(path()).\(field.key)" }
      guard let name = parameterName(field.key, counting: "item_parameter", path: fieldPath, &ledger) else { continue }
      guard !field.value.isStructured, item[name] == nil else {
        ledger.leaveOut(
          GA4Violation(fieldPath: fieldPath(), code: .valueInvalid, message: "an item parameter is a single value"),
          as: "item_parameter_left_out")
        continue
      }
      if !GA4Limits.itemParameterNames.contains(name) {
        custom += 1
        if let violation = GA4Rules.checkCount(
          custom, limit: GA4Limits.maximumCustomItemParameters, what: "custom item parameters", path: path())
        {
          ledger.leaveOut(violation, as: "item_parameter_left_out")
          continue
        }
      }
      var value = scalar(field.value)
      if case .string(let text) = value, let violation = GA4Rules.checkParameterValue(text, path: fieldPath()),
        let fixed = ledger.fix(
          violation, String(text.prefix(GA4Limits.maximumParameterValueLength)),
          as: "item_parameter_value_truncated")
      {
        value = .string(fixed)
      }
      item[name] = value
    }
    return item
  }
}
