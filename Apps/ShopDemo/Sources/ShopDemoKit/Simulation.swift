import CoreTracker
import DLProductDetail
import DLSellerProfile
import DLTracker
import Foundation
import TYCheckout
import TYProductDetail
import TYTracker

/// Simulated users over simulated weeks, each one a device with its own platform, versions and
/// clock, driving the real presenters of every feature through both product trackers.
///
/// The mix is realistic enough for every report to have something to show: 60 % iOS, app versions
/// 5.10 to 5.12, retention that decays week after week, a product funnel that loses people at
/// each step (detail → cart → checkout → order), Dolap Lite used by a third of the sessions, counters.
/// A seed makes a run repeatable.
struct Simulation {
  let users: Int
  let weeks: Int
  let seed: UInt64

  /// A generator that is the same for the same seed (SplitMix64).
  struct Random: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var value = state
      value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
      value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
      return value ^ (value >> 31)
    }
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
  }

  /// A device's own clock, moved forward by the simulation.
  final class Clock: @unchecked Sendable {
    // @unchecked: `now` is only touched under `lock`.
    private let lock = NSLock()
    private var current: Date
    init(_ start: Date) { current = start }
    var now: Date { lock.withLock { current } }
    func set(_ date: Date) { lock.withLock { current = date } }
    func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }
  }

  /// A developer's machine running the next version's debug build (its events are development's).
  static let developerContext = TrackingContext(
    appName: "Trendyol", appVersion: "5.13.0", appBuild: "5130", osName: "iOS", osVersion: "18.1",
    platform: "iOS", deviceModel: "arm64", locale: "en_US", timeZone: "Europe/Istanbul")

  static let catalog = [
    Product(
      id: "TY-1001", name: "Air Runner", brand: "Koston", category: "Sneakers", priceMinor: 1_299_90,
      sizes: ["41", "42", "43"], stock: 50),
    Product(
      id: "TY-1002", name: "Linen Shirt", brand: "Mavi", category: "Shirts", priceMinor: 649_90, sizes: ["M", "L"],
      stock: 80),
    Product(
      id: "TY-1003", name: "Espresso Maker", brand: "Arzum", category: "Kitchen", priceMinor: 2_499_00, stock: 20),
    Product(
      id: "TY-1004", name: "Phone Case", brand: "Spigen", category: "Accessories", priceMinor: 249_90, stock: 200),
    Product(id: "TY-1005", name: "Backpack", brand: "Eastpak", category: "Bags", priceMinor: 1_899_00, stock: 30),
  ]

  static let listings = [
    Listing(id: "DL-2001", title: "Vintage denim jacket", sellerID: "S-77", priceMinor: 450_00, condition: .likeNew),
    Listing(id: "DL-2002", title: "Leather boots", sellerID: "S-12", priceMinor: 900_00, condition: .good),
    Listing(id: "DL-2003", title: "Silk scarf", sellerID: "S-40", priceMinor: 150_00, condition: .new),
  ]

  /// The device profile of one user.
  struct Device {
    let id: String
    let context: TrackingContext
    let firstDay: Int
  }

  func device(_ index: Int, random: inout Random) -> Device {
    let iOS = random.chance(0.6)
    let roll = Double.random(in: 0..<1, using: &random)
    let version = roll < 0.2 ? "5.10.0" : roll < 0.5 ? "5.11.0" : "5.12.0"
    let os =
      iOS
      ? ["16.7", "17.4.1", "17.5", "18.1"].randomElement(using: &random)!
      : ["13", "14", "15"].randomElement(using: &random)!
    let context = TrackingContext(
      appName: "Trendyol", appVersion: version, appBuild: version.replacingOccurrences(of: ".", with: ""),
      osName: iOS ? "iOS" : "Android", osVersion: os, platform: iOS ? "iOS" : "Android",
      deviceModel: iOS ? "iPhone15,2" : "Pixel 8", locale: "tr_TR", timeZone: "Europe/Istanbul")
    return Device(
      id: String(format: "sim-%04d-%08x", index, UInt32(truncatingIfNeeded: random.next())), context: context,
      firstDay: Int.random(in: 0..<max(1, weeks * 7 - 1), using: &random))
  }

  /// Runs every user: `makeTrackers` builds the two product trackers of one device (sharing the
  /// services), `progress` gets (users done, users).
  func run(
    start: Date,
    makeTrackers: (Device, Clock) -> (TYTracker, DLTracker),
    progress: (Int, Int) -> Void
  ) async {
    var random = Random(state: seed)
    for index in 0..<users {
      let phone = device(index, random: &random)
      // Two users in five sign in during their first visit, after a product viewed anonymously; one
      // in four of those also shops on a tablet, signed in there from the start: one person, two
      // devices, and events before the sign-in that count for the person too.
      let signsIn = random.chance(0.4)
      let tier = random.chance(0.3) ? "gold" : "standard"
      let user = "user-\(index)"
      await visits(on: phone, of: user, start: start, makeTrackers: makeTrackers, random: &random) {
        trendyol, dolap, visit in
        guard signsIn, visit == 0 else { return }
        ProductDetailPresenter(product: Self.catalog[0], tracker: trendyol).viewDidAppear()
        Self.signIn(user, trendyol, dolap, tier: tier)
      }
      if signsIn, random.chance(0.25) {
        let other = device(index, random: &random)
        let tablet = Device(
          id: other.id + "-tablet", context: other.context, firstDay: max(phone.firstDay, other.firstDay))
        await visits(on: tablet, of: user, start: start, makeTrackers: makeTrackers, random: &random) {
          trendyol, dolap, visit in
          if visit == 0 { Self.signIn(user, trendyol, dolap, tier: nil) }
        }
      }
      progress(index + 1, users)
    }
  }

  /// The visits of one device of `user` from its first day; `beforeVisit` runs before each (0 the
  /// first).
  private func visits(
    on device: Device, of user: String, start: Date, makeTrackers: (Device, Clock) -> (TYTracker, DLTracker),
    random: inout Random, beforeVisit: (TYTracker, DLTracker, Int) -> Void
  ) async {
    let firstDay = device.firstDay
    let clock = Clock(start)
    let (trendyol, dolap) = makeTrackers(device, clock)
    var visit = 0
    for day in firstDay..<(weeks * 7) {
      let week = (day - firstDay) / 7
      // A visit on a given day: likely in the first week, less likely every week after.
      let returns = 0.12 * pow(0.6, Double(week))
      guard day == firstDay || random.chance(returns) else { continue }
      clock.set(start + Double(day) * 86_400 + Double.random(in: 8 * 3_600...22 * 3_600, using: &random))
      beforeVisit(trendyol, dolap, visit)
      session(trendyol: trendyol, dolap: dolap, user: user, clock: clock, random: &random)
      clock.advance(45 * 60)  // a gap that ends the session
      visit += 1
    }
    await trendyol.flush()
    await dolap.flush()
  }

  private static func signIn(_ user: String, _ trendyol: TYTracker, _ dolap: DLTracker, tier: String?) {
    trendyol.identify(userID: user)
    dolap.identify(userID: user)
    if let tier { trendyol.setUserProperty(.string(tier), forKey: "loyalty_tier") }
  }

  /// One visit: browse products into a cart, maybe check it out (a coupon sometimes, a refund now
  /// and then); sometimes Dolap Lite inside the app.
  func session(trendyol: TYTracker, dolap: DLTracker, user: String, clock: Clock, random: inout Random) {
    trendyol.count("Foregrounded app")
    var lines: [CartItem] = []
    for _ in 0..<Int.random(in: 1...4, using: &random) {
      let product = Self.catalog.randomElement(using: &random)!
      let detail = ProductDetailPresenter(product: product, tracker: trendyol)
      detail.viewDidAppear()
      clock.advance(Double.random(in: 10...90, using: &random))
      if random.chance(0.15) { detail.toggleFavourite() }
      guard random.chance(0.35) else { continue }
      let size = product.sizes.randomElement(using: &random)
      if let size { detail.selectSize(size) }
      clock.advance(Double.random(in: 5...30, using: &random))
      let quantity = random.chance(0.2) ? 2 : 1
      guard (try? detail.addToCart(quantity: quantity)) != nil else { continue }
      lines.append(
        CartItem(
          productID: product.id, name: product.name, unitPriceMinor: product.priceMinor, quantity: quantity,
          brand: product.brand, categories: Self.categories[product.category] ?? [product.category], variant: size))
      if random.chance(0.1) { detail.share(via: ShareChannel.allCases.randomElement(using: &random)!) }
    }
    if !lines.isEmpty, random.chance(0.6) { checkOut(lines, trendyol: trendyol, user: user, clock: clock, &random) }
    browseDolapLite(dolap, user: user, clock: clock, &random)
  }

  /// Category paths of the catalogue's categories, broadest first.
  static let categories = [
    "Sneakers": ["Shoes", "Sneakers"], "Shirts": ["Clothing", "Shirts"], "Kitchen": ["Home", "Kitchen"],
    "Accessories": ["Electronics", "Accessories"], "Bags": ["Accessories", "Bags"],
  ]

  /// The checkout of a cart: shipping under 500 TRY, a coupon now and then, most orders placed, a
  /// few refunded in part or whole.
  private func checkOut(
    _ lines: [CartItem], trendyol: TYTracker, user: String, clock: Clock, _ random: inout Random
  ) {
    clock.advance(Double.random(in: 20...120, using: &random))
    let subtotal = lines.reduce(0) { $0 + $1.totalMinor }
    let cart = Cart(items: lines, shippingMinor: subtotal < 500_00 ? 29_99 : 0)
    let checkout = CheckoutPresenter(
      cart: cart, makeOrderID: { "TY-\(UInt32.random(in: 0...UInt32.max))" }, tracker: trendyol)
    checkout.viewDidAppear()
    if random.chance(0.3) { _ = checkout.applyCoupon(random.chance(0.7) ? "welcome10" : "NOPE") }
    checkout.selectPayment(PaymentMethod.allCases.randomElement(using: &random)!)
    clock.advance(Double.random(in: 10...60, using: &random))
    guard random.chance(0.7), (try? checkout.placeOrder(email: "\(user)@example.com")) != nil else { return }
    guard random.chance(0.12) else { return }
    clock.advance(Double.random(in: 3_600...86_400, using: &random))
    if lines.count > 1, random.chance(0.5) {
      checkout.refund(productIDs: [lines[0].productID])
    } else {
      checkout.refund()
    }
  }

  /// Dolap Lite inside the app, in a third of the visits: a listing, likes, offers, a purchase now
  /// and then, the seller's profile.
  private func browseDolapLite(_ dolap: DLTracker, user: String, clock: Clock, _ random: inout Random) {
    guard random.chance(0.33) else { return }
    let listing = Self.listings.randomElement(using: &random)!
    let detail = ListingDetailPresenter(listing: listing, userID: user, likeCount: 3, tracker: dolap)
    detail.viewDidAppear()
    clock.advance(Double.random(in: 10...60, using: &random))
    if random.chance(0.3) { detail.toggleLike() }
    if random.chance(0.2) {
      try? detail.makeOffer(amountMinor: listing.priceMinor * Int.random(in: 40...95, using: &random) / 100)
    }
    if random.chance(0.1) {
      try? detail.buy(orderID: "DL-\(UInt32.random(in: 0...UInt32.max))", shippingMinor: 19_99)
    }
    if random.chance(0.15) {
      let seller = Seller(
        id: listing.sellerID, shopName: "Closet \(listing.sellerID)", phone: "+90 555 000 0000", listingCount: 20,
        followerCount: 100)
      let profile = SellerProfilePresenter(seller: seller, viewerID: user, tracker: dolap)
      profile.viewDidAppear()
      if random.chance(0.3) { try? profile.toggleFollow() }
    }
  }
}
