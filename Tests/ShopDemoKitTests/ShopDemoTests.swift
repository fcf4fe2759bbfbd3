import CollectorStore
import CoreTracker
import Logging
import ShopDemoKit
import TestSupport
import Testing

@Suite("ShopDemo end to end")
struct ShopDemoTests {
  private func stream(_ outcome: ShopDemo.Outcome, _ product: String, _ service: String) -> [StoredEvent] {
    outcome.streams.first { $0.product == product && $0.service == ServiceID(service) }?.events ?? []
  }

  /// The demo through its embedded collector: every feature reaches every service over real HTTP, in
  /// that service's own shape, and the collector stores each exactly once.
  @Test func everyFeatureReachesEveryServiceInItsOwnShape() async throws {
    let directory = TemporaryDirectory()
    let outcome = try await ShopDemo(
      logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, dataDirectory: directory.url
    ).run()

    let trendyolFirebase = stream(outcome, "Trendyol", "firebase").map(\.name)
    #expect(trendyolFirebase.contains("view_item") && trendyolFirebase.contains("purchase"))
    let dolapFirebase = stream(outcome, "Dolap Lite", "firebase")
    let like = try #require(dolapFirebase.first { $0.name == "select_content" })
    #expect(like.parametersJSON.contains(#""item_id":"listing-id-DL-5521-user-id-ty-1001""#))
    #expect(like.parametersJSON.contains(#""product":"dolap_lite""#))
    #expect(like.sessionID != nil)
    #expect(stream(outcome, "Dolap Lite", "mixpanel").contains { $0.name == "Listing Liked" })
    // Reports go to the collector only; the phone number never leaves the pipeline.
    #expect(!dolapFirebase.contains { $0.name == "seller_reported" })
    #expect(stream(outcome, "Dolap Lite", "collector").contains { $0.name == "seller_reported" })
    let called = try #require(stream(outcome, "Dolap Lite", "collector").first { $0.name == "seller_called" })
    #expect(!called.parametersJSON.contains("phone"))
    // The receipt e-mail is dropped as personal data.
    let order = try #require(stream(outcome, "Trendyol", "collector").first { $0.name == "order_placed" })
    #expect(!order.parametersJSON.contains("email") && order.parametersJSON.contains(#""product":"trendyol""#))

    for stats in [outcome.trendyolStats, outcome.dolapStats] {
      #expect(stats.totalDropped == 0 && stats.queued == 0)
      // Each service delivered what it was routed, and the collector stored exactly that.
      for (service, counts) in stats.services where service != ServiceID("log") {
        #expect(counts.dropped.isEmpty, "\(service): \(counts.dropped)")
        let product = stats == outcome.trendyolStats ? "Trendyol" : "Dolap Lite"
        #expect(stream(outcome, product, service.rawValue).count == counts.delivered, "\(product) \(service)")
      }
    }
    #expect(outcome.trendyolStats.tracked == 11)
    #expect(outcome.dolapStats.tracked == 10)
    #expect(ShopDemo.render(outcome).contains("== Dolap Lite → firebase"))
  }
}
