import CollectorStore
import CollectorWire
import Foundation
import WireJSON

/// What the ClickHouse store derives from an event's parameters when it writes the event, so reports
/// read typed columns instead of parsing JSON (ClickHouse 18.16 has no exact JSON functions:
/// `visitParamExtract*` finds a key at any depth):
/// - the top-level parameters as two parallel arrays, `param_keys` and `param_values` (each value as
///   report text, `JSONValue.text`), as Plausible keeps custom properties;
/// - the commerce facts of purchases and refunds, one row per order and per counted item, read by
///   ``CommerceVocabulary`` (the lists the SQL engines' `CommerceSQL` reads too): a purchase's key
///   is its transaction id (else its event id), a refund's its event id; amounts are numbers under
///   10^15; an item needs an id or a name and a quantity of at least 1 (1 when missing).
struct ClickHouseFacts {
  /// The events these are the facts of.
  let events: [StoredEvent]
  /// Each event's top-level parameters as report text, in ``events``' order (none for an event
  /// whose parameters are not an object).
  var parameters: [(keys: [String], values: [String])] = []
  var orders: [[String: Any]] = []
  var items: [[String: Any]] = []
  /// The device-to-person rows: each device's earliest identified event among these.
  var persons: [[String: Any]] = []
  /// The events whose parameters are not a JSON object (a write with one stores nothing).
  var notObjects: [String] = []

  init(_ events: [StoredEvent]) {
    self.events = events
    // By device and the earliest (time, event id), ids compared by their bytes as the tables
    // compare them (``ExactText``).
    var firsts: [ExactText: StoredEvent] = [:]
    for event in events where event.userID != nil {
      let key = ExactText(event.app + "\u{0}" + event.deviceID)
      if let first = firsts[key],
        first.occurredAt < event.occurredAt
          || (first.occurredAt == event.occurredAt && !event.eventID.precedesInBytes(first.eventID))
      {
        continue
      }
      firsts[key] = event
    }
    persons = firsts.sorted { $0.key < $1.key }.map(\.value).map { event in
      [
        "app": event.app, "device_id": event.deviceID, "person": event.userID ?? "", "first_ms": event.occurredAt,
        "first_event": event.eventID,
      ]
    }
    for event in events {
      guard let fields = StoredParameters.parse(event.parametersJSON) else {
        notObjects.append(event.eventID)
        parameters.append(([], []))
        continue
      }
      var keys: [String] = []
      var values: [String] = []
      for field in fields {
        guard let text = field.value.text else { continue }
        keys.append(field.key)
        values.append(text)
      }
      parameters.append((keys, values))
      add(event, .object(fields))
    }
  }

  private mutating func add(_ event: StoredEvent, _ parameters: JSONValue) {
    guard let order = CommerceVocabulary.order(name: event.name, eventID: event.eventID, parameters: parameters)
    else { return }
    var place: [String: Any] = [
      "app": event.app, "t": event.occurredAt, "device_id": event.deviceID, "platform": event.context[.platform],
      "app_version": event.context[.appVersion], "os_version": event.context[.osVersion], "event_id": event.eventID,
      "k": order.key, "currency": order.currency, "user_id": event.userID.map { $0 as Any } ?? NSNull(),
    ]
    var row = place
    row["purchase"] = order.purchase ? 1 : 0
    row["value"] = order.value
    orders.append(row)
    for item in order.items {
      place["position"] = item.position
      place["item"] = item.item
      place["name"] = Self.optional(item.name)
      place["category"] = Self.optional(item.category)
      place["brand"] = Self.optional(item.brand)
      place["price"] = Self.optional(item.price)
      place["quantity"] = item.quantity
      items.append(place)
    }
  }

  private static func optional(_ value: (any Sendable)?) -> Any { value.map { $0 as Any } ?? NSNull() }
}
