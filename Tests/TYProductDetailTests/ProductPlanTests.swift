import CoreTrackerTesting
import TYProductDetail
import TYTracker
import Testing

/// Every event the product detail sends is one Trendyol's plan (`Plans/TYTracker.json`) accepts: a
/// development build, which checks each event, says nothing.
@Suite("The product detail and Trendyol's tracking plan")
struct ProductPlanTests {
  @Test func everyEventTheScreenSendsIsInThePlan() async throws {
    let warnings = RecordedWarnings()
    let log = RecordingService(id: TYService.log)
    let tracker = TYTracker(log: log, configuration: warnings.developmentConfiguration)
    let sneakers = Product(
      id: "P1", name: "Air Runner", brand: "Koston", category: "Sneakers", priceMinor: 1_299_90, sizes: ["41", "42"],
      stock: 3)
    let presenter = ProductDetailPresenter(product: sneakers, tracker: tracker)
    presenter.viewDidAppear()
    presenter.toggleFavourite()
    presenter.toggleFavourite()
    try? presenter.addToCart()  // no size yet: a failure, tracked
    presenter.selectSize("42")
    try presenter.addToCart(quantity: 2)
    presenter.share(via: .copyLink)
    await tracker.flush()
    #expect(
      log.names == [
        "product_detail_viewed", "product_favourited", "product_unfavourited", "product_add_to_cart_failed",
        "product_size_selected", "product_added_to_cart", "product_shared",
      ])
    #expect(warnings.lines.isEmpty, "\(warnings.lines)")
  }
}
