import CollectorIngest
import CollectorRuntime
import CollectorServer
import CollectorService
import CollectorStore
import CollectorWire
import DLProductDetail
import DLTracker
import Delivery
import FirebaseService
import Foundation
import Hummingbird
import HummingbirdTesting
import LogService
import Logging
import MixpanelService
import ServiceSupport
import TYProductDetail
import TYTracker
import TestSupport
import Testing

/// Both product trackers with every service at once (log, collector, Firebase, Mixpanel), driven
/// through the real presenters, over real HTTP on 127.0.0.1 into a running collector that speaks the
/// native batch, `/mp/collect` and `/import`. Each service writes with its own key (its own app in
/// the store), so each event is counted once per service, in that service's shape.
@Suite("Vendor services live end to end")
struct VendorLiveTests {
  static let keys = [
    "ty-firebase": "test-key-ty-firebase-0001", "ty-mixpanel": "test-key-ty-mixpanel-0001",
    "dl": "test-key-dl-collector-0001", "dl-firebase": "test-key-dl-firebase-0001",
    "dl-mixpanel": "test-key-dl-mixpanel-0001",
  ]

  struct Services {
    let log: LogService
    let collector: CollectorService
    let firebase: FirebaseService
    let mixpanel: MixpanelService
  }

  static func services(
    base: URL, collectorKey: String, product: String, directory: URL
  ) throws -> Services {
    let retry = RetryPolicy(initialDelay: 0.05, maximumDelay: 0.2)
    let policy = FlushPolicy(count: 50, interval: nil, flushTimeout: 30)
    return Services(
      log: LogService(logger: Logger(label: "e2e.\(product)")),
      collector: try CollectorService(
        endpoint: base, writeKey: collectorKey, directory: directory.appendingPathComponent("collector"),
        retry: retry, policy: policy),
      firebase: try FirebaseService(
        firebaseAppID: "1:1:ios:\(product)", apiSecret: keys["\(product)-firebase"]!,
        directory: directory.appendingPathComponent("firebase"), host: base,
        limits: .strict { Issue.record("\($0)") }, retry: retry, policy: policy),
      mixpanel: try MixpanelService(
        mode: .projectToken(keys["\(product)-mixpanel"]!), directory: directory.appendingPathComponent("mixpanel"),
        host: base, limits: .strict { Issue.record("\($0)") }, retry: retry, policy: policy)
    )
  }

  static func histogram(_ events: [StoredEvent]) -> [String: Int] {
    events.reduce(into: [:]) { $0[$1.name, default: 0] += 1 }
  }

  @Test("each event reaches each service once, in that service's own shape")
  func allServicesAtOnce() async throws {
    let collector = try await makeCollector()
    try await collector.keyRing.provision(
      Self.keys.map { ProvisionedKey(app: $0.key, key: $0.value, scope: .write) }, now: 0)
    let directory = TemporaryDirectory()
    let root = directory.url
    let rounds = 40
    try await collector.application(closesStore: false).test(.live) { client async throws in
      let base = URL(string: "http://127.0.0.1:\(try #require(client.port))")!
      let ty = try Self.services(
        base: base, collectorKey: writeKey, product: "ty", directory: root.appendingPathComponent("ty"))
      let dl = try Self.services(
        base: base, collectorKey: Self.keys["dl"]!, product: "dl", directory: root.appendingPathComponent("dl"))
      let configuration = TrackerConfiguration(emitsSessionEvents: false)
      let trendyol = TYTracker(
        log: ty.log, collector: ty.collector, services: [ty.firebase, ty.mixpanel], configuration: configuration)
      let dolap = DLTracker(
        log: dl.log, collector: dl.collector, services: [dl.firebase, dl.mixpanel], configuration: configuration)
      for round in 0..<rounds {
        let product = ProductDetailPresenter(
          product: Product(
            id: "p-\(round)", name: "Sneaker \(round)", brand: "Brand", category: "Shoes", priceMinor: 129_900,
            sizes: ["42", "43"], stock: 5),
          tracker: trendyol)
        product.viewDidAppear()
        product.toggleFavourite()
        product.selectSize("42")
        try product.addToCart()
        product.share(via: .whatsapp)
        let listing = ListingDetailPresenter(
          listing: Listing(id: "l-\(round)", title: "Jacket", sellerID: "s-1", priceMinor: 50_000, condition: .new),
          userID: "u-\(round)", tracker: dolap)
        listing.viewDidAppear()
        listing.toggleLike()
        try listing.makeOffer(amountMinor: 45_000)
        listing.messageSeller()
      }
      await trendyol.flush()
      await dolap.flush()

      let store = collector.store
      func stored(_ app: String) async throws -> [StoredEvent] { try await store.events(app: app, limit: 10_000) }
      let tyNative = try await stored("ty")
      let tyFirebase = try await stored("ty-firebase")
      let tyMixpanel = try await stored("ty-mixpanel")
      #expect(
        Self.histogram(tyNative) == [
          "product_detail_viewed": rounds, "product_favourited": rounds, "product_size_selected": rounds,
          "product_added_to_cart": rounds, "product_shared": rounds,
        ])
      #expect(
        Self.histogram(tyFirebase) == [
          "view_item": rounds, "add_to_wishlist": rounds, "product_size_selected": rounds, "add_to_cart": rounds,
          "share": rounds,
        ])
      #expect(
        Self.histogram(tyMixpanel) == [
          "Product Viewed": rounds, "product_favourited": rounds, "product_size_selected": rounds,
          "Added To Cart": rounds, "product_shared": rounds,
        ])
      let dlNative = try await stored("dl")
      let dlFirebase = try await stored("dl-firebase")
      let dlMixpanel = try await stored("dl-mixpanel")
      #expect(
        Self.histogram(dlNative) == [
          "listing_viewed": rounds, "listing_liked": rounds, "offer_made": rounds, "seller_messaged": rounds,
        ])
      #expect(
        Self.histogram(dlFirebase) == [
          "view_item": rounds, "select_content": rounds, "offer_made": rounds, "seller_messaged": rounds,
        ])
      #expect(
        Self.histogram(dlMixpanel) == [
          "listing_viewed": rounds, "Listing Liked": rounds, "offer_made": rounds, "seller_messaged": rounds,
        ])
      // The Moments-style like: select_content with the composed item id, and each product's defaults.
      let like = try #require(dlFirebase.first { $0.name == "select_content" && $0.parametersJSON.contains("l-3-") })
      #expect(like.parametersJSON.contains(#""item_id":"listing-id-l-3-user-id-u-3""#))
      #expect(like.parametersJSON.contains(#""item_name":"listing-like""#))
      #expect(like.sessionID != nil)
      #expect(tyFirebase.allSatisfy { $0.parametersJSON.contains(#""product":"trendyol""#) })
      #expect(tyMixpanel.allSatisfy { $0.parametersJSON.contains(#""product":"trendyol""#) })
      #expect(tyMixpanel.allSatisfy { $0.context[.osName] == tyNative[0].context[.osName] })
      // Every service counted every event delivered; the log wrote each one.
      for (services, count) in [(ty, rounds * 5), (dl, rounds * 4)] {
        #expect(services.log.statistics()?.delivered == count)
        #expect(services.collector.statistics()?.delivered == count)
        #expect(services.firebase.statistics()?.delivered == count)
        #expect(services.mixpanel.statistics()?.delivered == count)
      }
    }
    try await collector.store.close()
  }
}
