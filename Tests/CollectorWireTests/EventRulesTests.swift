import CollectorWire
import Testing
import WireJSON

/// The native event's rules, declared once in the wire and applied by the collector.
@Suite("Event rules")
struct EventRulesTests {
  static func event(
    id: String = "0190a0b0-0000-7000-8000-000000000001", name: String = "add_to_cart", kind: String = "action",
    parameters: JSONObject = ["price": .double(19.5)], anonymousId: String = "install-1",
    userId: String? = nil
  ) -> CollectorEvent {
    CollectorEvent(
      id: id, name: name, kind: kind, timestamp: 1_800_000_000_000, parameters: parameters, anonymousId: anonymousId,
      userId: userId)
  }

  static let broken: [(CollectorEvent, String)] = [
    (event(id: ""), "id"),
    (event(id: String(repeating: "x", count: 100)), "id"),
    (event(name: ""), "name"),
    (event(name: String(repeating: "ş", count: 129)), "name"),
    (event(kind: "a\tb"), "kind"),
    (event(anonymousId: ""), "anonymousId"),
    (event(userId: "u\u{7F}"), "userId"),
    (event(parameters: ["bad\nkey": .int(1)]), "parameters"),
    (event(parameters: ["note": .array([.string("ok"), .string("a\u{0}b")])]), "parameters.note[1]"),
    (event(parameters: ["item": .object(["": .int(1)])]), "parameters.item"),
  ]

  @Test(arguments: broken)
  func eachRuleNamesItsField(event: CollectorEvent, field: String) {
    #expect(EventRules.problem(in: event)?.field == field)
  }

  @Test func aValidEventBreaksNoRule() {
    let event = Self.event(name: String(repeating: "ş", count: 128), userId: "user-1")
    #expect(EventRules.problem(in: event) == nil)
    #expect(EventRules.sizeProblem(of: event, stored: EventRules.storedParameters(event.parameters)) == nil)
  }

  @Test func theSizeCountsTheStoredParameters() {
    let big = Self.event(parameters: ["text": .string(String(repeating: "a", count: CollectorLimits.maximumEventBytes))]
    )
    #expect(EventRules.problem(in: big) == nil)
    #expect(EventRules.sizeProblem(of: big, stored: EventRules.storedParameters(big.parameters))?.field == "parameters")
    #expect(
      EventRules.storedParameters(["b": .int(1), "a": .bool(true)]) == #"{"b":1,"a":true}"#, "in the tracked order")
  }
}
