import Foundation
import Testing
import TrackingPlan

@testable import TrackingPlanCodegen

@Suite("Events generated from a tracking plan")
struct SwiftEventsTests {
  static let plan: TrackingPlan = {
    var signedUp = TrackingPlan.Event(kind: "action", description: "An account was made.", owner: "growth")
    signedUp.services = ["collector"]
    signedUp.parameters = [
      .init("plan_id", type: .string, required: true), .init("seats", type: .integer),
      .init("email", type: .string, personal: true), .init("trial", type: .boolean, required: true),
    ]
    return TrackingPlan(app: "shop", version: 4, events: ["signed_up": signedUp])
  }()

  @Test("each event is a CoreTrackable struct: typed properties, the plan's order, optional ones left out when nil")
  func source() {
    let source = SwiftEvents.source(of: Self.plan, namespace: "ShopPlan")
    for line in [
      "public enum ShopPlan {", "public static let version = 4", "public struct SignedUp: CoreTrackable",
      "public var planID: String", "public var seats: Int?", "public var trial: Bool",
      "public init(planID: String, seats: Int? = nil, email: String? = nil, trial: Bool)",
      ##"public var name: String { #"signed_up"# }"##, "public var kind: EventKind { .action }",
      ##"if let seats { parameters.set(EventParameter(key: #"seats"#, value: .int(seats))) }"##,
      ##"parameters.set(EventParameter(key: #"email"#, value: .string(email), isPersonal: true))"##,
      ##"public var services: ServiceSelection { .only([ServiceID(rawValue: #"collector"#)]) }"##,
      ##"public static let plan = TrackingPlan("##, ##".init(#"email"#, type: .string, personal: true)"##,
    ] {
      #expect(source.contains(line), "missing: \(line)")
    }
    let order = ["#\"plan_id\"#", "#\"seats\"#", "#\"email\"#", "#\"trial\"#"].map { source.range(of: $0)!.lowerBound }
    #expect(order == order.sorted(), "the parameters in the plan's order")
  }

  @Test(
    "names become Swift names", arguments: [("product_id", "productID"), ("item_count", "itemCount"), ("3d", "_3d")])
  func names(name: String, property: String) {
    #expect(SwiftEvents.propertyName(name) == property)
  }

  @Test("a name with a quote and a hash stays one literal", arguments: [#"a"b"#, ##"a"#b"##, "plain"])
  func literals(text: String) {
    let literal = PlanLiteral.quoted(text)
    let hashes = literal.prefix { $0 == "#" }
    #expect(literal.hasSuffix("\"" + hashes) && !text.contains("\"" + hashes))
  }

  @Test("the repository's plans decode and generate every event")
  func repositoryPlans() throws {
    let plans = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Plans")
    let files = try FileManager.default.contentsOfDirectory(atPath: plans.path).filter { $0.hasSuffix(".json") }
    #expect(!files.isEmpty)
    for file in files {
      let plan = try JSONDecoder().decode(TrackingPlan.self, from: Data(contentsOf: plans.appendingPathComponent(file)))
      let source = SwiftEvents.source(of: plan, namespace: "Plan")
      for name in plan.events.keys { #expect(source.contains("public var name: String { #\"\(name)\"# }")) }
    }
  }
}
