import CollectorReports
import CollectorServer
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

    // The loyalty tier set on the tracker reaches GA4 as a user property, kept by the collector.
    let properties = try #require(stream(outcome, "Trendyol", "firebase").first { $0.name == "user_properties" })
    #expect(properties.kind == "identify" && properties.parametersJSON.contains(#""loyalty_tier":"gold""#))
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
    let order = try #require(stream(outcome, "Trendyol", "collector").first { $0.name == "purchase" })
    #expect(!order.parametersJSON.contains("email") && order.parametersJSON.contains(#""product":"trendyol""#))
    // The order reaches the collector natively, Firebase-shaped and Mixpanel-shaped, with its items.
    #expect(order.parametersJSON.contains(#""item_id":"TY-90417""#) && order.parametersJSON.contains(#""quantity":3"#))
    let firebasePurchase = try #require(stream(outcome, "Trendyol", "firebase").first { $0.name == "purchase" })
    #expect(
      firebasePurchase.parametersJSON.contains(#""items":[{"#)
        && firebasePurchase.parametersJSON.contains("TY-DEMO-0001"))
    let completed = try #require(stream(outcome, "Trendyol", "mixpanel").first { $0.name == "Order Completed" })
    #expect(
      completed.parametersJSON.contains(#""Products":[{"#)
        && completed.parametersJSON.contains(#""Product ID":"TY-90417""#))

    for stats in [outcome.trendyolStats, outcome.dolapStats] {
      #expect(stats.totalDropped == 0 && stats.queued == 0)
      // Each service delivered what it was routed, and the collector stored exactly that.
      for (service, counts) in stats.services where service != ServiceID("log") {
        #expect(counts.dropped.isEmpty, "\(service): \(counts.dropped)")
        let product = stats == outcome.trendyolStats ? "Trendyol" : "Dolap Lite"
        // (GA4's request-level user properties are kept as a row of their own, not a delivered event.)
        let events = stream(outcome, product, service.rawValue).filter {
          $0.kind != "identify" || service.rawValue != "firebase"
        }
        #expect(events.count == counts.delivered, "\(product) \(service)")
      }
    }
    // 11 from the features, 3 from the lifecycle of a fresh install: installed, opened, backgrounded.
    #expect(outcome.trendyolStats.tracked == 14)
    // (As a set: the streams are sorted by time, then name, and these may share a millisecond.)
    #expect(
      Set(stream(outcome, "Trendyol", "collector").map(\.name).filter { $0.hasPrefix("application_") }) == [
        "application_installed", "application_opened", "application_backgrounded",
      ])
    #expect(outcome.dolapStats.tracked == 10)
    #expect(ShopDemo.render(outcome).contains("== Dolap Lite → firebase"))
  }
}

@Suite("ShopDemo simulation")
struct ShopDemoSimulationTests {
  /// A small simulation through the embedded collector: the reports it prints have data, the
  /// funnel narrows step by step, and the same seed gives the same figures.
  @Test func simulatedWeeksFillEveryReportRepeatably() async throws {
    var figures: [String] = []
    for _ in 0..<2 {
      let directory = TemporaryDirectory()
      var progress: [Int] = []
      let outcome = try await ShopDemo(
        logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, dataDirectory: directory.url
      ).simulate(users: 25, weeks: 2, seed: 7) { done, _ in progress.append(done) }
      #expect(progress == Array(1...25))
      #expect(outcome.events > 100)
      let titles = outcome.reports.map(\.title)
      #expect(titles.count == 7)
      let overview = try #require(outcome.reports.first?.table)
      #expect(overview.rows.first?[0] == "events" && overview.rows.first?[1] == String(outcome.events))
      // Users sign in part-way and some shop on a second device: fewer people than devices.
      let figure = { (name: String) in overview.rows.first { $0[0] == name }.flatMap { Int($0[1]) } ?? -1 }
      #expect(figure("people") > 0 && figure("people") < figure("devices"), "\(overview.rows)")
      let top = outcome.reports[1].table
      #expect(top.rows.contains { $0[0] == "product_detail_viewed" })
      let retention = outcome.reports[2].table
      #expect(!retention.rows.isEmpty && retention.rows.allSatisfy { $0[2] == "100.0" })
      let funnel = outcome.reports[3].table.rows.map { Int($0[2]) ?? -1 }
      #expect(funnel.count == 4 && funnel[0] > 0 && zip(funnel, funnel.dropFirst()).allSatisfy { $0 >= $1 })
      let revenue = outcome.reports[4].table
      #expect(revenue.rows.first?[0] == "TRY" && (Int(revenue.rows.first?[1] ?? "") ?? 0) > 0)
      let products = outcome.reports[5].table
      #expect(!products.rows.isEmpty && products.rows.allSatisfy { $0[0].hasPrefix("TY-") })
      // The developer's debug session is development's: counted there, in no figure above.
      let development = outcome.reports[6].table
      let developerEvents = try await outcome.collector.collector.store.eventCount(app: "ty@development")
      #expect(developerEvents > 5 && development.rows.first?[1] == String(developerEvents), "\(development.rows)")
      #expect(development.rows.first { $0[0] == "devices" }?[1] == "1")
      figures.append(revenue.rows.map { $0.joined(separator: ",") }.joined(separator: ";"))
      let stored = try await outcome.collector.collector.store.eventCount(app: "ty")
      #expect(stored == outcome.events)
      figures.append(overview.rows.map { $0.prefix(2).joined(separator: "=") }.joined(separator: " "))
      try await outcome.collector.stop()
    }
    #expect(
      figures.count == 4 && Array(figures.prefix(2)) == Array(figures.suffix(2)), "the same seed gives the same figures"
    )
  }

  @Test func theDeliveryCheckShowsAWrongKeyARefusedEventAndAGoodBatch() async throws {
    let directory = TemporaryDirectory()
    let lines = try await DeliveryCheck.run(dataDirectory: directory.url)
    let text = lines.joined(separator: "\n")
    #expect(text.contains("collector: refused 1, HTTP 401 (wrong or revoked write key)"), "\(text)")
    #expect(text.contains("warning: CoreTracker: collector was refused with HTTP 401"), "\(text)")
    #expect(
      text.contains("collector: refused 1, HTTP 200: events[0].parameters.currency: must be an ISO 4217 currency code"),
      "\(text)")
    #expect(text.contains("collector: delivered 2"), "\(text)")
    #expect(lines.filter { $0.contains("delivered 1") }.count == 1, "the refused event's good neighbour")
    #expect(
      text.contains(#"[CoreTracker] tracked purchase (action) {"currency":"XX","value":10,"transaction_id":"T-1"}"#))
    #expect(
      text.contains(#"[CoreTracker]   → collector: purchase {"currency":"XX","value":10,"transaction_id":"T-1"}"#))
    #expect(text.contains("[CoreTracker] collector: refused 1, HTTP 401 (wrong or revoked write key)"))
  }
}
