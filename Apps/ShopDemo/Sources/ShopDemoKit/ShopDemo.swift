public import CollectorReports
import CollectorServer
public import CollectorStore
public import CoreTracker
import DLProductDetail
import DLSellerProfile
import DLTracker
public import Foundation
import LogService
public import Logging
import TYCheckout
import TYProductDetail
import TYTracker

/// The super app on the command line: Trendyol with Dolap Lite inside it, driven through the real
/// presenters of every feature, each product tracking through its own tracker and the real services
/// (system log, collector, Firebase, Mixpanel), all pointed at a collector embedded in the process
/// (SQLite in `dataDirectory`, an ephemeral port on 127.0.0.1) over real HTTP.
public struct ShopDemo {
  /// What one service of one product stored in the embedded collector during the run.
  public struct Stream: Sendable {
    /// `Trendyol` or `Dolap Lite`.
    public var product: String
    /// The service (`collector`, `firebase`, `mixpanel`).
    public var service: ServiceID
    /// The collector app its key writes to (`ty`, `ty-firebase`, ...).
    public var app: String
    /// The events as stored, oldest first.
    public var events: [StoredEvent]
  }

  /// What one run produced.
  public struct Outcome: Sendable {
    /// Per product and service, what the collector stored, in display order.
    public var streams: [Stream]
    /// Trendyol's tracker counts.
    public var trendyolStats: TrackerStats
    /// Dolap Lite's tracker counts.
    public var dolapStats: TrackerStats
    /// The URL the embedded collector listened on.
    public var collectorURL: URL
  }

  private let logger: Logger
  private let dataDirectory: URL

  /// Creates the demo; `logger` receives the system-log service's lines; the collector's SQLite
  /// file and the services' outboxes live in `dataDirectory` (created if needed).
  public init(logger: Logger, dataDirectory: URL = URL(fileURLWithPath: "shop-demo-data")) {
    self.logger = logger
    self.dataDirectory = dataDirectory
  }

  /// The collector apps, one per product and service, each with its own write key.
  static let streams: [(product: String, service: ServiceID, app: String)] = [
    ("Trendyol", TYService.collector, "ty"), ("Trendyol", TYService.firebase, "ty-firebase"),
    ("Trendyol", TYService.mixpanel, "ty-mixpanel"), ("Dolap Lite", DLService.collector, "dl"),
    ("Dolap Lite", DLService.firebase, "dl-firebase"), ("Dolap Lite", DLService.mixpanel, "dl-mixpanel"),
  ]

  /// Starts the embedded collector, builds both product trackers with every service pointed at it,
  /// drives a scripted session through every feature, flushes, stops the collector and returns what
  /// it stored.
  public func run() async throws -> Outcome {
    let started = Int64(Date().timeIntervalSince1970 * 1000)
    let embedded = try await EmbeddedCollector.start(
      dataDirectory: dataDirectory, apps: Self.streams.map(\.app), stopsOnSignal: false)
    // One shared system-log service instance, reused by both products (each adds its defaults).
    let log = LogService(logger: logger)
    let context = TrackingContext(
      appName: "Trendyol", appVersion: "5.12.0", appBuild: "5120", osName: "iOS", osVersion: "17.4.1",
      platform: "iOS", deviceModel: "iPhone15,2", locale: "tr_TR", timeZone: "Europe/Istanbul"
    )
    let outboxes = dataDirectory.appendingPathComponent("outboxes")
    let (tyCollector, tyVendors) = try embedded.services("ty", outboxes: outboxes)
    let (dlCollector, dlVendors) = try embedded.services("dl", outboxes: outboxes)
    // The app's lifecycle belongs to Trendyol, the host app; both products journal what they track,
    // so a crash of the demo loses nothing (the next run replays it).
    let lifecycle = ManualLifecycleSource()
    let journals = dataDirectory.appendingPathComponent("journals")
    let trendyol = TYTracker(
      log: log, collector: tyCollector, services: tyVendors,
      configuration: TrackerConfiguration(
        context: context, journal: TrackerJournal(directory: journals.appendingPathComponent("ty")),
        lifecycle: AppLifecycle(source: lifecycle, directory: dataDirectory.appendingPathComponent("app"))))
    let dolap = DLTracker(
      log: log, collector: dlCollector, services: dlVendors,
      configuration: TrackerConfiguration(
        context: context, privacy: PrivacyStage(personalKeys: ["phone"]),
        journal: TrackerJournal(directory: journals.appendingPathComponent("dl")))
    )
    trendyol.identify(userID: "ty-1001")
    dolap.identify(userID: "ty-1001")
    trendyol.setUserProperty("gold", forKey: "loyalty_tier")

    Self.shopOnTrendyol(tracker: trendyol)
    Self.browseDolapLite(tracker: dolap, userID: "ty-1001")
    lifecycle.send(.enteredBackground)  // the user leaves the app: Trendyol sends what waits

    await trendyol.flush()
    await dolap.flush()
    var streams: [Stream] = []
    for stream in Self.streams {
      let events = try await embedded.collector.store.events(app: stream.app, limit: 10_000)
        .filter { $0.receivedAt >= started }.sorted { ($0.occurredAt, $0.name) < ($1.occurredAt, $1.name) }
      streams.append(Stream(product: stream.product, service: stream.service, app: stream.app, events: events))
    }
    try await embedded.stop()
    return Outcome(
      streams: streams, trendyolStats: trendyol.base.stats, dolapStats: dolap.base.stats, collectorURL: embedded.url)
  }

  /// What a simulation produced: the running collector (serving the dashboard) and the reports.
  public struct SimulationOutcome: Sendable {
    /// The collector, still running: stop it, or wait for a signal.
    public var collector: EmbeddedCollector
    /// The simulated range (ms since 1970).
    public var from: Int64
    /// The end of the simulated range.
    public var to: Int64
    /// Events the Trendyol collector stream stored.
    public var events: Int
    /// The reports printed: title and table.
    public var reports: [(title: String, table: ReportTable)]
  }

  /// Simulates `users` devices over `weeks` weeks through the real presenters of every feature and
  /// every service, into a collector that keeps running; returns the collector and the reports the
  /// command prints (overview, top events, weekly retention, the purchase funnel).
  public func simulate(
    users: Int, weeks: Int, seed: UInt64, stopsOnSignal: Bool = false, progress: (Int, Int) -> Void = { _, _ in }
  ) async throws -> SimulationOutcome {
    let embedded = try await EmbeddedCollector.start(
      dataDirectory: dataDirectory, apps: Self.streams.map(\.app), stopsOnSignal: stopsOnSignal)
    let outboxes = dataDirectory.appendingPathComponent("outboxes")
    let (tyCollector, tyVendors) = try embedded.services("ty", outboxes: outboxes)
    let (dlCollector, dlVendors) = try embedded.services("dl", outboxes: outboxes)
    let log = LogService(logger: logger)
    let day: TimeInterval = 86_400
    let today = (Date().timeIntervalSince1970 / day).rounded(.down) * day
    let start = Date(timeIntervalSince1970: today - Double(weeks * 7 - 1) * day)
    await Simulation(users: users, weeks: weeks, seed: seed).run(
      start: start,
      makeTrackers: { device, clock in
        let configuration = TrackerConfiguration(
          context: device.context, anonymousID: device.id, clock: { clock.now })
        var dolapConfiguration = configuration
        dolapConfiguration.privacy = PrivacyStage(personalKeys: ["phone"])
        return (
          TYTracker(log: log, collector: tyCollector, services: tyVendors, configuration: configuration),
          DLTracker(log: log, collector: dlCollector, services: dlVendors, configuration: dolapConfiguration)
        )
      }, progress: progress)
    // A developer's debug build of the same app: its events are development's, kept out of every
    // figure above and shown apart (the last report; the dashboard's Environment picker).
    let developer = TYTracker(
      log: log, collector: tyCollector, services: [],
      configuration: TrackerConfiguration(
        context: Simulation.developerContext, environment: .development, anonymousID: "developer-mac"))
    Self.shopOnTrendyol(tracker: developer)
    await developer.flush()
    for service in [tyCollector, dlCollector] + tyVendors + dlVendors { await service.flush() }

    guard let reports = embedded.collector.reports else { throw CancellationError() }
    let from = Int64(start.timeIntervalSince1970 * 1000)
    let to = Int64((today + day) * 1000)
    let filter = try ReportFilter(app: "ty", from: from, to: to)
    let overview = try await reports.overview(filter)
    let top = try await reports.topEvents(filter, limit: 10)
    let retention = try await reports.retention(filter, period: .week)
    let funnel = try await reports.funnel(
      filter, steps: ["product_detail_viewed", "product_added_to_cart", "checkout_viewed", "purchase"],
      window: 3_600_000)
    let revenue = try await reports.revenue(filter)
    let items = try await reports.topItems(filter, category: nil, brand: nil, limit: 10)
    var developmentFilter = filter
    developmentFilter.environment = TrackingEnvironment.development.name
    let development = try await reports.overview(developmentFilter)
    return SimulationOutcome(
      collector: embedded, from: from, to: to, events: Int(overview.current.events),
      reports: [
        ("Overview (Trendyol, the simulated weeks)", overview.table), ("Top events", top.table),
        ("Weekly retention (% of each cohort active)", retention.table),
        ("Funnel: detail → cart → checkout → purchase, within an hour", funnel.table),
        ("Revenue (refunds subtracted; against the weeks before)", revenue.table),
        ("Top products by revenue", items.table),
        ("Overview (Trendyol, development: a developer's debug build, kept apart)", development.table),
      ])
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

    let cart = Cart(
      items: [
        CartItem(
          productID: sneakers.id, name: sneakers.name, unitPriceMinor: sneakers.priceMinor, quantity: 1,
          brand: sneakers.brand, categories: ["Shoes", "Sneakers"], variant: "42"),
        CartItem(
          productID: "TY-90417", name: "Running Socks", unitPriceMinor: 89_90, quantity: 3, brand: "Koston",
          categories: ["Clothing", "Socks"]),
      ], shippingMinor: 0)
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

  /// The outcome as text: per product and service, one line per event as the collector stored it
  /// (in that service's own shape), then the trackers' counts.
  public static func render(_ outcome: Outcome) -> String {
    var text = "(embedded collector on \(outcome.collectorURL.absoluteString), SQLite)\n"
    for stream in outcome.streams {
      text +=
        "\n== \(stream.product) → \(stream.service) (app \(stream.app): \(stream.events.count) events stored) ==\n"
      for event in stream.events {
        text += "  \(event.kind) \(event.name) \(event.parametersJSON)\n"
      }
    }
    for (product, stats) in [("Trendyol", outcome.trendyolStats), ("Dolap Lite", outcome.dolapStats)] {
      let dropped = stats.dropped.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
      text += "\n\(product): tracked=\(stats.tracked) generated=\(stats.generated) routed=\(stats.routed)"
      text += " dropped={\(dropped)} queued=\(stats.queued)\n"
      for (service, counts) in stats.services.sorted(by: { $0.key < $1.key }) {
        text += "  \(service): delivered=\(counts.delivered)"
        if counts.dropped.values.reduce(0, +) > 0 { text += " dropped=\(counts.dropped.values.reduce(0, +))" }
        if !counts.repaired.isEmpty { text += " repaired=\(counts.repaired.values.reduce(0, +))" }
        text += "\n"
      }
    }
    return text
  }
}
