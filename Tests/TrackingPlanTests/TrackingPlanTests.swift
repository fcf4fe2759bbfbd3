import CollectorWire
import Foundation
import Testing
import TrackingPlan
import WireJSON

@Suite("Tracking plan")
struct TrackingPlanTests {
  static let version1 = TrackingPlan(
    app: "ty", version: 1,
    events: [
      "product_viewed": .init(
        kind: "screen", owner: "product-detail",
        parameters: [
          .init("product_id", type: .string, required: true), .init("price", type: .number, minimum: 0),
          .init("quantity", type: .integer, minimum: 1, maximum: 99),
          .init("currency", type: .string, values: ["TRY", "EUR"]), .init("in_stock", type: .boolean),
          .init("items", type: .list),
        ])
    ])

  @Test(
    "each way an event breaks the plan is named, with its field and the plan's version",
    arguments: [
      ("product_viewed", ["product_id": .string("p")], nil),
      ("product_viewed", ["product_id": .string("p"), "price": .int(10), "in_stock": .bool(true)], nil),
      ("product_seen", ["product_id": .string("p")], "name: product_seen is not in the tracking plan (ty v1)"),
      ("product_viewed", [:], "parameters.product_id: is required (tracking plan ty v1)"),
      (
        "product_viewed", ["product_id": .string("p"), "colour": .string("red")],
        "parameters.colour: is not in the tracking plan (ty v1)"
      ),
      (
        "product_viewed", ["product_id": .int(7)],
        "parameters.product_id: must be a string, not a number (tracking plan ty v1)"
      ),
      (
        "product_viewed", ["product_id": .string("p"), "price": .string("10")],
        "parameters.price: must be a number, not a string (tracking plan ty v1)"
      ),
      (
        "product_viewed", ["product_id": .string("p"), "price": .double(-1)],
        "parameters.price: must be at least 0 (tracking plan ty v1)"
      ),
      (
        "product_viewed", ["product_id": .string("p"), "quantity": .double(1.5)],
        "parameters.quantity: must be an integer, not a number (tracking plan ty v1)"
      ),
      (
        "product_viewed", ["product_id": .string("p"), "quantity": .int(100)],
        "parameters.quantity: must be at most 99 (tracking plan ty v1)"
      ),
      (
        "product_viewed", ["product_id": .string("p"), "currency": .string("USD")],
        "parameters.currency: must be one of TRY, EUR (tracking plan ty v1)"
      ),
    ] as [(String, JSONObject, String?)])
  func problems(name: String, parameters: JSONObject, expected: String?) {
    #expect(Self.version1.problem(name: name, parameters: parameters)?.description == expected)
  }

  @Test("an event passes when any version accepts it; otherwise the newest version says why")
  func versions() {
    var version2 = Self.version1
    version2.version = 2
    version2.mode = .warn
    version2.events["product_viewed"]?.parameters[1] = .init("price", type: .integer)
    let plans = TrackingPlans([Self.version1, version2])
    let old: JSONObject = ["product_id": .string("p"), "price": .double(9.5)]
    #expect(plans.verdict(app: "ty", name: "product_viewed", parameters: old) == nil, "v1 still accepts it")
    let wrong: JSONObject = ["product_id": .string("p"), "price": .string("9")]
    let verdict = plans.verdict(app: "ty@development", name: "product_viewed", parameters: wrong)
    #expect(verdict?.problem.reason == "must be an integer, not a string (tracking plan ty v2)")
    #expect(verdict?.mode == .warn && plans.mode(of: "ty") == .warn)
    #expect(plans.verdict(app: "dl", name: "anything", parameters: [:]) == nil, "an app without a plan")
  }

  @Test("the plan's JSON form decodes, optional fields left out")
  func decodes() throws {
    let json = #"""
      {"app": "ty", "version": 3, "mode": "warn",
       "events": {"signed_up": {"parameters": [{"name": "plan", "type": "string", "required": true, "values": ["pro"]}]},
                  "app_opened": {}}}
      """#
    let plan = try JSONDecoder().decode(TrackingPlan.self, from: Data(json.utf8))
    #expect(plan.version == 3 && plan.mode == .warn && plan.events["app_opened"]?.parameters.isEmpty == true)
    #expect(plan.events["signed_up"]?.parameters == [.init("plan", type: .string, required: true, values: ["pro"])])
  }
}
