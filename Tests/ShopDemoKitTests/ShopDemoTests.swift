import CoreTracker
import Logging
import ShopDemoKit
import Testing

@Suite("ShopDemo end to end")
struct ShopDemoTests {
  private func inbox(_ outcome: ShopDemo.Outcome, _ product: String, _ service: String) -> [TrackedEvent] {
    outcome.inboxes.first { $0.product == product && $0.id == ServiceID(service) }?.events ?? []
  }

  @Test func everyFeatureReachesEveryServiceInItsOwnShape() async throws {
    let outcome = await ShopDemo(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }).run()

    let trendyolFirebase = inbox(outcome, "Trendyol", "firebase").map(\.name)
    #expect(trendyolFirebase.contains("view_item") && trendyolFirebase.contains("purchase"))
    let dolapFirebase = inbox(outcome, "Dolap Lite", "firebase")
    let like = try #require(dolapFirebase.first { $0.name == "select_content" })
    #expect(like.parameters["item_id"] == "listing-id-DL-5521-user-id-ty-1001")
    #expect(like.parameters["product"] == "dolap_lite")
    // Reports go to the collector only; the phone number never leaves the pipeline.
    #expect(!dolapFirebase.contains { $0.name == "seller_reported" })
    #expect(inbox(outcome, "Dolap Lite", "collector").contains { $0.name == "seller_reported" })
    let called = try #require(inbox(outcome, "Dolap Lite", "collector").first { $0.name == "seller_called" })
    #expect(called.parameters["phone"] == nil)
    // The receipt e-mail is dropped as personal data.
    let order = try #require(inbox(outcome, "Trendyol", "collector").first { $0.name == "order_placed" })
    #expect(order.parameters["email"] == nil)
    #expect(order.parameters["product"] == "trendyol")

    #expect(outcome.trendyolStats.totalDropped == 0 && outcome.trendyolStats.queued == 0)
    #expect(outcome.trendyolStats.tracked == 11)
    #expect(outcome.dolapStats.tracked == 10)
    #expect(
      outcome.dolapStats.services[ServiceID("log")]?.delivered == outcome.dolapStats.routed
        + outcome.trendyolStats.routed)
    #expect(ShopDemo.render(outcome).contains("== Dolap Lite → firebase"))
  }
}
