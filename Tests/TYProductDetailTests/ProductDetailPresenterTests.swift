import CoreTrackerTesting
import TYProductDetail
import TYTracker
import Testing

@Suite("Trendyol product detail")
struct ProductDetailPresenterTests {
  let sneakers = Product(
    id: "P1", name: "Air Runner", brand: "Koston", category: "Sneakers", priceMinor: 1_299_90,
    sizes: ["41", "42"], stock: 2
  )

  @Test func viewingTracksAScreenViewInEachServicesShape() {
    let tracker = RecordingTracker()
    ProductDetailPresenter(product: sneakers, tracker: tracker).viewDidAppear()
    #expect(tracker.events.map(\.kind) == [.screenView])
    tracker.expectReceived(
      by: TYService.collector,
      [
        (
          "product_detail_viewed",
          [
            "product_id": "P1", "brand": "Koston", "category": "Sneakers", "price": 1299.9, "currency": "TRY",
          ]
        )
      ])
    tracker.expectReceived(
      by: TYService.firebase,
      [
        (
          "view_item",
          [
            "currency": "TRY", "value": 1299.9,
            "items": [
              [
                "item_id": "P1", "item_name": "Air Runner", "item_brand": "Koston", "item_category": "Sneakers",
                "price": 1299.9, "quantity": 1,
              ]
            ],
          ]
        )
      ])
    tracker.expectReceived(
      by: TYService.mixpanel,
      [
        ("Product Viewed", ["Product ID": "P1", "Brand": "Koston", "Price": 1299.9])
      ])
  }

  @Test func favouritingTogglesAndTracksBothWays() {
    let tracker = RecordingTracker()
    let presenter = ProductDetailPresenter(product: sneakers, tracker: tracker)
    presenter.toggleFavourite()
    #expect(presenter.state.isFavourite)
    presenter.toggleFavourite()
    #expect(!presenter.state.isFavourite)
    tracker.expectNames(["product_favourited", "product_unfavourited"])
    // GA4 has a wishlist event for adding only; removal goes in the uniform shape.
    tracker.expectReceived(
      by: TYService.firebase,
      [
        (
          "add_to_wishlist",
          [
            "currency": "TRY", "value": 1299.9,
            "items": [
              [
                "item_id": "P1", "item_name": "Air Runner", "item_brand": "Koston", "item_category": "Sneakers",
                "price": 1299.9, "quantity": 1,
              ]
            ],
          ]
        ),
        ("product_unfavourited", ["product_id": "P1"]),
      ])
  }

  @Test func addingWithoutASizeFailsAndTracksTheReason() {
    let tracker = RecordingTracker()
    let presenter = ProductDetailPresenter(product: sneakers, tracker: tracker)
    #expect(throws: AddToCartError.sizeRequired) { try presenter.addToCart() }
    #expect(presenter.state.quantityInCart == 0)
    #expect(presenter.state.message == "Size required")
    tracker.expectReceived(
      by: TYService.log, [("product_add_to_cart_failed", ["product_id": "P1", "reason": "size_required"])])
  }

  @Test func addingToCartRespectsStock() throws {
    let tracker = RecordingTracker()
    let presenter = ProductDetailPresenter(product: sneakers, tracker: tracker)
    presenter.selectSize("42")
    try presenter.addToCart(quantity: 2)
    #expect(presenter.state.quantityInCart == 2)
    #expect(!presenter.state.canAddToCart)
    #expect(throws: AddToCartError.outOfStock) { try presenter.addToCart() }
    tracker.expectReceived(
      by: TYService.collector,
      [
        ("product_size_selected", ["product_id": "P1", "size": "42"]),
        (
          "product_added_to_cart",
          [
            "product_id": "P1", "brand": "Koston", "category": "Sneakers", "price": 1299.9, "currency": "TRY",
            "size": "42", "quantity": 2, "value": 2599.8,
          ]
        ),
        ("product_add_to_cart_failed", ["product_id": "P1", "reason": "out_of_stock"]),
      ])
    tracker.expectReceived(
      by: TYService.firebase,
      [
        ("product_size_selected", ["product_id": "P1", "size": "42"]),
        (
          "add_to_cart",
          [
            "currency": "TRY", "value": 2599.8,
            "items": [
              [
                "item_id": "P1", "item_name": "Air Runner", "item_brand": "Koston", "item_category": "Sneakers",
                "item_variant": "42", "price": 1299.9, "quantity": 2,
              ]
            ],
          ]
        ),
        ("product_add_to_cart_failed", ["product_id": "P1", "reason": "out_of_stock"]),
      ])
    tracker.expectReceived(
      by: TYService.mixpanel,
      [
        ("product_size_selected", ["product_id": "P1", "size": "42"]),
        ("Added To Cart", ["Product ID": "P1", "Quantity": 2]),
        ("product_add_to_cart_failed", ["product_id": "P1", "reason": "out_of_stock"]),
      ])
  }

  @Test(arguments: [0, -1, 3])
  func invalidQuantitiesAreRefused(quantity: Int) {
    let tracker = RecordingTracker()
    let presenter = ProductDetailPresenter(
      product: Product(id: "P2", name: "Mug", brand: "B", category: "Home", priceMinor: 100, stock: 2),
      tracker: tracker
    )
    #expect(throws: AddToCartError.invalidQuantity(quantity, available: 2)) {
      try presenter.addToCart(quantity: quantity)
    }
    tracker.expectNames(["product_add_to_cart_failed"])
  }

  @Test func unknownOrRepeatedSizesTrackNothing() {
    let presenter = ProductDetailPresenter(
      product: sneakers, tracker: UnimplementedTracker(allowing: ["product_size_selected"]))
    presenter.selectSize("99")
    #expect(presenter.state.selectedSize == nil)
    presenter.selectSize("41")
    presenter.selectSize("41")
    #expect(presenter.state.selectedSize == "41")
  }

  @Test func aSingleSizeIsPreselectedAndOutOfStockDisablesTheButton() {
    let single = Product(id: "P3", name: "Cap", brand: "B", category: "Hats", priceMinor: 100, sizes: ["M"], stock: 0)
    let presenter = ProductDetailPresenter(product: single, tracker: UnimplementedTracker())
    #expect(presenter.state.selectedSize == "M")
    #expect(!presenter.state.canAddToCart)
    #expect(presenter.state.message == "Out of stock")
  }

  @Test(arguments: ShareChannel.allCases)
  func sharingTracksTheChannel(channel: ShareChannel) {
    let tracker = RecordingTracker()
    ProductDetailPresenter(product: sneakers, tracker: tracker).share(via: channel)
    tracker.expectReceived(
      by: TYService.firebase,
      [
        ("share", ["method": .string(channel.rawValue), "content_type": "product", "item_id": "P1"])
      ])
    tracker.expectReceived(
      by: TYService.collector,
      [
        ("product_shared", ["product_id": "P1", "channel": .string(channel.rawValue)])
      ])
  }
}
