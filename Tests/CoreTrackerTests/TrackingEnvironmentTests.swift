import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

@Suite("Tracking environment")
struct TrackingEnvironmentTests {
  @Test(
    "the build decides: an override, else a debug build is development, a sandbox receipt internal",
    arguments: [
      (nil, false, nil, "production"), (nil, true, nil, "development"),
      (nil, false, "file:///app/StoreKit/sandboxReceipt", "internal"),
      (nil, true, "file:///app/StoreKit/sandboxReceipt", "development"),
      (nil, false, "file:///app/StoreKit/receipt", "production"), ("staging", true, nil, "staging"),
      ("", true, nil, "development"),
    ] as [(String?, Bool, String?, String)])
  func detect(override: String?, debug: Bool, receipt: String?, expected: String) {
    let environment = TrackingEnvironment.detect(
      debug: debug, receiptURL: receipt.flatMap(URL.init(string:)), override: override)
    #expect(environment.name == expected)
  }

  @Test("one value per environment; an environment without its own takes production's")
  func perEnvironment() {
    let urls = PerEnvironment(production: "https://c.example", development: "http://127.0.0.1:8080")
    #expect(urls[.production] == "https://c.example" && urls[.development] == "http://127.0.0.1:8080")
    #expect(urls[.internal] == "https://c.example" && urls["qa"] == "https://c.example")
  }

  @Test("the configuration's environment is stamped on every event; production by default")
  func stamped() async throws {
    let development = Harness { $0.environment = .development }
    development.tracker.track(ShopEvent.productViewed(id: "p-1"))
    await development.flush()
    #expect(try #require(development.collector.events.first).context.environment == "development")

    let plain = Harness()
    plain.tracker.track(ShopEvent.productViewed(id: "p-1"))
    await plain.flush()
    #expect(try #require(plain.collector.events.first).context.environment == "production")
    #expect(TrackerConfiguration(environment: .internal).context.environment == "internal")
  }

  @Test("a context saved before environments existed decodes as production's")
  func olderContext() throws {
    var json =
      try JSONSerialization.jsonObject(with: JSONEncoder().encode(TrackingContext(appName: "A"))) as! [String: Any]
    json["environment"] = nil
    let decoded = try JSONDecoder().decode(TrackingContext.self, from: JSONSerialization.data(withJSONObject: json))
    #expect(decoded.environment == "production" && decoded.appName == "A")
  }
}
