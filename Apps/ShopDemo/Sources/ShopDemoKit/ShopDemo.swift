public import CoreTracker
import DLProductDetail
import DLSellerProfile
import DLTracker
import LogService
public import Logging
import TYCheckout
import TYProductDetail
import TYTracker

/// The super app on the command line: Trendyol with Dolap Lite inside it, driven through the real
/// presenters of every feature, each product tracking through its own tracker and services.
public struct ShopDemo {
  /// What one run produced.
  public struct Outcome: Sendable {
    /// Every service inbox, per product, in display order.
    public var inboxes: [InboxService]
    /// Trendyol's tracker counts.
    public var trendyolStats: TrackerStats
    /// Dolap Lite's tracker counts.
    public var dolapStats: TrackerStats
  }

  private let logger: Logger

  /// Creates the demo; `logger` receives the system-log service's lines.
  public init(logger: Logger) { self.logger = logger }

  /// Builds both product trackers, drives a scripted session through every feature, flushes and
  /// returns what each service received.
  public func run() async -> Outcome {
    // One shared system-log service instance, reused by both products (each adds its defaults).
    let log = LogService(logger: logger)
    let trendyolInboxes = [TYService.collector, TYService.firebase, TYService.mixpanel].map {
      InboxService(id: $0, product: "Trendyol")
    }
    let dolapInboxes = [DLService.collector, DLService.firebase, DLService.mixpanel].map {
      InboxService(id: $0, product: "Dolap Lite")
    }
    let context = TrackingContext(
      appName: "Trendyol", appVersion: "5.12.0", appBuild: "5120", osName: "iOS", osVersion: "17.4.1",
      platform: "iOS", deviceModel: "iPhone15,2", locale: "tr_TR", timeZone: "Europe/Istanbul"
    )
    let trendyol = TYTracker(log: log, services: trendyolInboxes, configuration: TrackerConfiguration(context: context))
    let dolap = DLTracker(
      log: log, services: dolapInboxes,
      configuration: TrackerConfiguration(context: context, privacy: PrivacyStage(personalKeys: ["phone"]))
    )
    trendyol.identify(userID: "ty-1001")
    dolap.identify(userID: "ty-1001")
    trendyol.setUserProperty("gold", forKey: "loyalty_tier")

    Self.shopOnTrendyol(tracker: trendyol)
    Self.browseDolapLite(tracker: dolap, userID: "ty-1001")

    await trendyol.flush()
    await dolap.flush()
    return Outcome(
      inboxes: trendyolInboxes + dolapInboxes,
      trendyolStats: trendyol.base.stats,
      dolapStats: dolap.base.stats
    )
  }

  /// A Trendyol session: browse a product, favourite it, pick a size, add to cart, share, check out.
  static func shopOnTrendyol(tracker: any CoreTracker) {
    let sneakers = Product(
      id: "TY-88231", name: "Air Runner", brand: "Koston", category: "Sneakers", priceMinor: 1_299_90,
      sizes: ["41", "42", "43"], stock: 3
    )
    let detail = ProductDetailPresenter(product: sneakers, tracker: tracker)
    detail.viewDidAppear()
    detail.toggleFavourite()
    try? detail.addToCart()  // fails: no size yet, tracked as a failure
    detail.selectSize("42")
    try? detail.addToCart(quantity: 1)
    detail.share(via: .whatsapp)

    let cart = Cart(items: [
      CartItem(productID: sneakers.id, name: sneakers.name, unitPriceMinor: sneakers.priceMinor, quantity: 1)
    ])
    let checkout = CheckoutPresenter(cart: cart, makeOrderID: { "TY-DEMO-0001" }, tracker: tracker)
    checkout.viewDidAppear()
    checkout.applyCoupon("NOPE")
    checkout.applyCoupon("welcome10")
    checkout.selectPayment(.card)
    _ = try? checkout.placeOrder(email: "ayse@example.com")
  }

  /// A Dolap Lite session inside the super app: a listing, a like, offers, the seller's profile.
  static func browseDolapLite(tracker: any CoreTracker, userID: String) {
    let jacket = Listing(
      id: "DL-5521", title: "Vintage denim jacket", sellerID: "S-77", priceMinor: 450_00, condition: .likeNew
    )
    let listing = ListingDetailPresenter(listing: jacket, userID: userID, likeCount: 12, tracker: tracker)
    listing.viewDidAppear()
    listing.toggleLike()
    try? listing.makeOffer(amountMinor: 100_00)  // too low: tracked as rejected
    try? listing.makeOffer(amountMinor: 380_00)
    listing.messageSeller()

    let seller = Seller(
      id: "S-77", shopName: "Retro Closet", phone: "+90 555 000 0000", listingCount: 48, followerCount: 310)
    let profile = SellerProfilePresenter(seller: seller, viewerID: userID, tracker: tracker)
    profile.viewDidAppear()
    try? profile.toggleFollow()
    try? profile.rate(stars: 5)
    profile.call()
    profile.report(.misleading)
  }

  /// The outcome as text: per service, one line per event in that service's own shape, then counts.
  public static func render(_ outcome: Outcome) -> String {
    var text = ""
    for inbox in outcome.inboxes {
      text += "\n== \(inbox.product) → \(inbox.id) (\(inbox.events.count) events) ==\n"
      for event in inbox.events {
        text += "  " + LogService.line(for: event) + "\n"
      }
    }
    for (product, stats) in [("Trendyol", outcome.trendyolStats), ("Dolap Lite", outcome.dolapStats)] {
      let dropped = stats.dropped.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
      text += "\n\(product): tracked=\(stats.tracked) generated=\(stats.generated) routed=\(stats.routed)"
      text += " dropped={\(dropped)} queued=\(stats.queued)\n"
      for (service, counts) in stats.services.sorted(by: { $0.key < $1.key }) {
        text += "  \(service): received=\(counts.received) delivered=\(counts.delivered)\n"
      }
    }
    return text
  }
}
