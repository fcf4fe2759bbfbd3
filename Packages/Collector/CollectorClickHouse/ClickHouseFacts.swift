import CollectorStore
import CollectorWire
import Foundation
import WireJSON

/// What the ClickHouse store derives from an event's parameters when it writes the event, so reports
/// read typed columns instead of parsing JSON (ClickHouse 18.16 has no exact JSON functions:
/// `visitParamExtract*` finds a key at any depth):
/// - the top-level parameters as two parallel arrays, `param_keys` and `param_values` (each value as
///   report text, `JSONValue.text`), as Plausible keeps custom properties;
/// - the commerce facts of purchases and refunds, one row per order and per counted item, by the
///   same rules as the SQL engines' `CommerceSQL`: a purchase's key is its `transaction_id` (else
///   its event id), a refund's its event id; amounts are numbers under 10^15; an item needs an id or
///   a name and a quantity of at least 1 (1 when missing).
struct ClickHouseFacts {
  var parameters: [String: (keys: [String], values: [String])] = [:]
  var orders: [[String: Any]] = []
  var items: [[String: Any]] = []
  /// The device-to-person rows: each device's earliest identified event among these.
  var persons: [[String: Any]] = []
  /// The events whose parameters are not a JSON object (a write with one stores nothing).
  var notObjects: [String] = []

  init(_ events: [StoredEvent]) {
    var firsts: [String: StoredEvent] = [:]
    for event in events where event.userID != nil {
      let key = event.app + "\u{0}" + event.deviceID
      if let first = firsts[key], (first.occurredAt, first.eventID) <= (event.occurredAt, event.eventID) { continue }
      firsts[key] = event
    }
    persons = firsts.values.sorted { ($0.app, $0.deviceID) < ($1.app, $1.deviceID) }.map { event in
      [
        "app": event.app, "device_id": event.deviceID, "person": event.userID ?? "", "first_ms": event.occurredAt,
        "first_event": event.eventID,
      ]
    }
    for event in events {
      guard let fields = StoredParameters.parse(event.parametersJSON) else {
        notObjects.append(event.eventID)
        continue
      }
      var keys: [String] = []
      var values: [String] = []
      for field in fields {
        guard let text = field.value.text else { continue }
        keys.append(field.key)
        values.append(text)
      }
      parameters[event.eventID] = (keys, values)
      if event.name == "purchase" || event.name == "refund" { add(event, .object(fields)) }
    }
  }

  private mutating func add(_ event: StoredEvent, _ parameters: JSONValue) {
    let purchase = event.name == "purchase"
    let key = purchase ? parameters["transaction_id"]?.string ?? event.eventID : event.eventID
    let currency = parameters["currency"]?.string ?? ""
    var place: [String: Any] = [
      "app": event.app, "t": event.occurredAt, "device_id": event.deviceID, "platform": event.context[.platform],
      "app_version": event.context[.appVersion], "os_version": event.context[.osVersion], "event_id": event.eventID,
      "k": key, "currency": currency, "user_id": event.userID.map { $0 as Any } ?? NSNull(),
    ]
    var order = place
    order["purchase"] = purchase ? 1 : 0
    order["value"] = parameters["value"]?.amount ?? 0
    orders.append(order)
    guard purchase, case .array(let elements)? = parameters["items"] else { return }
    for (position, element) in elements.enumerated() {
      guard case .object = element else { continue }
      guard let item = element["item_id"]?.string ?? element["item_name"]?.string else { continue }
      let quantity = element["quantity"]?.amount ?? 1
      guard quantity >= 1 else { continue }
      place["position"] = position
      place["item"] = item
      place["name"] = Self.optional(element["item_name"]?.string)
      place["category"] = Self.optional(element["item_category"]?.string)
      place["brand"] = Self.optional(element["item_brand"]?.string)
      place["price"] = Self.optional(element["price"]?.amount)
      place["quantity"] = quantity
      items.append(place)
    }
  }

  private static func optional(_ value: (any Sendable)?) -> Any { value.map { $0 as Any } ?? NSNull() }
}
