import CollectorWire
import Testing
import WireJSON

/// A batch with one event per parameters object; the context is the minimum the decoder takes.
private func batch(_ parameters: [String]) -> [UInt8] {
  let events = parameters.enumerated().map { index, json in
    #"{"id":"e\#(index)","name":"purchase","kind":"event","timestamp":1,"anonymousId":"x","parameters":\#(json)}"#
  }
  let context =
    #"{"appName":"a","appVersion":"1","appBuild":"1","osName":"iOS","osVersion":"17","platform":"ios","deviceModel":"m","locale":"tr_TR","timeZone":"UTC","libraryName":"CoreTracker","libraryVersion":"1"}"#
  return Array(#"{"context":\#(context),"events":[\#(events.joined(separator: ","))]}"#.utf8)
}

private let deep = String(repeating: "[", count: 5) + "1" + String(repeating: "]", count: 5)
private let long = "[" + Array(repeating: "1", count: 501).joined(separator: ",") + "]"

@Suite("Structured parameter values on the native wire")
struct StructuredValueTests {
  @Test func anOrderWithItemsIsKeptWhole() throws {
    let order =
      #"{"currency":"TRY","value":129.5,"items":[{"item_id":"SKU-1","price":49.75,"quantity":2,"tags":["a"]},{"item_name":"Socks","price":30}]}"#
    let decoded = try BatchDecoder.decode(batch([order]))
    #expect(decoded.rejected.isEmpty)
    #expect(
      decoded.events.first?.parameters["items"]
        == .array([
          .object([
            "item_id": .string("SKU-1"), "price": .double(49.75), "quantity": .int(2), "tags": .array([.string("a")]),
          ]),
          .object(["item_name": .string("Socks"), "price": .int(30)]),
        ]))
  }

  static let refused: [(parameters: String, field: String, reason: String)] = [
    (
      #"{"items":[{"price":1},{"price":2},{"price":null}]}"#, "parameters.items[2].price",
      "must be a string, a number, a boolean, a list or an object, not null"
    ),
    (#"{"items":[{"item_id":"a","price":1e999}]}"#, "parameters.items[0].price", "the number is out of range"),
    (#"{"items":[{"item_id":"a","item_id":"b"}]}"#, "parameters.items[0].item_id", "appears twice"),
    (#"{"deep":\#(deep)}"#, "parameters.deep[0][0][0][0]", "nests deeper than 4 levels"),
    (#"{"long":\#(long)}"#, "parameters.long", "holds more than 500 elements"),
    (
      #"{"items":[{"item_id":"a","quantity":-1}]}"#, "parameters.items[0].quantity",
      "must be a whole number from 1 to 1000000"
    ),
    (
      #"{"items":[{"item_id":"a","quantity":1.5}]}"#, "parameters.items[0].quantity",
      "must be a whole number from 1 to 1000000"
    ),
    (#"{"items":[{"item_id":"a","price":"9.99"}]}"#, "parameters.items[0].price", "must be a number"),
    (#"{"items":[{"item_id":"a"},"b"]}"#, "parameters.items[1]", "must be an item (an object)"),
    (#"{"items":"SKU-1"}"#, "parameters.items", "must be a list of items (objects)"),
  ]

  @Test(arguments: refused)
  func aBadValueRefusesItsEventWithThePathAndKeepsTheRest(parameters: String, field: String, reason: String) throws {
    let decoded = try BatchDecoder.decode(batch([#"{"ok":[1,2]}"#, parameters, #"{"ok":{"a":true}}"#]))
    #expect(decoded.events.map(\.id) == ["e0", "e2"])
    #expect(decoded.rejected.map { "\($0.index) \($0.field): \($0.reason)" } == ["1 events[1].\(field): \(reason)"])
  }

  @Test func valuesRoundTripThroughTheWriter() throws {
    var writer = EventWriter(id: "e0", name: "purchase", kind: "event", timestamp: 1, utcOffsetMinutes: 0)
    let items = JSONValue.array([.object(["item_id": .string("SKU-1"), "price": .double(9.99)]), .object([:])])
    writer.parameter("items", items)
    let event = String(decoding: writer.finish(anonymousId: "x", userId: nil, sessionId: nil), as: UTF8.self)
    #expect(event.contains(#""items":[{"item_id":"SKU-1","price":9.99},{}]"#))
    let decoded = try BatchDecoder.decode(batch([#"{"items":[{"item_id":"SKU-1","price":9.99},{}]}"#]))
    #expect(decoded.events.first?.parameters["items"] == items)
  }
}
