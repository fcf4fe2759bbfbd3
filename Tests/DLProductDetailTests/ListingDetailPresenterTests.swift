import CoreTrackerTesting
import DLProductDetail
import DLTracker
import Testing

@Suite("Dolap Lite listing detail")
struct ListingDetailPresenterTests {
  let jacket = Listing(id: "L1", title: "Denim jacket", sellerID: "S1", priceMinor: 400_00, condition: .good)

  @Test func theLikeEventHasItsMomentsShapeInFirebase() {
    let tracker = RecordingTracker()
    let presenter = ListingDetailPresenter(listing: jacket, userID: "U9", likeCount: 3, tracker: tracker)
    presenter.toggleLike()
    #expect(presenter.state.isLiked && presenter.state.likeCount == 4)
    tracker.expectReceived(
      by: DLService.firebase,
      [
        ("select_content", ["item_id": "listing-id-L1-user-id-U9", "item_name": "listing-like"])
      ])
    tracker.expectReceived(by: DLService.mixpanel, [("Listing Liked", ["Listing": "L1", "Seller": "S1"])])
    tracker.expectReceived(by: DLService.collector, [("listing_liked", ["listing_id": "L1"])])
    presenter.toggleLike()
    #expect(!presenter.state.isLiked && presenter.state.likeCount == 3)
    #expect(tracker.names == ["listing_liked", "listing_unliked"])
  }

  @Test func viewingTracksAScreenView() {
    let tracker = RecordingTracker()
    ListingDetailPresenter(listing: jacket, userID: "U9", tracker: tracker).viewDidAppear()
    tracker.expectReceived(
      by: DLService.log,
      [
        ("listing_viewed", ["listing_id": "L1", "seller_id": "S1", "price": 400.0, "condition": "good"])
      ])
    tracker.expectReceived(
      by: DLService.firebase,
      [
        ("view_item", ["item_id": "L1", "item_name": "Denim jacket", "price": 400.0, "currency": "TRY"])
      ])
  }

  @Test(arguments: [
    (
      Listing(id: "L", title: "t", sellerID: "s", priceMinor: 100_00, condition: .new, isSold: true), 60_00,
      OfferError.sold
    ),
    (
      Listing(id: "L", title: "t", sellerID: "s", priceMinor: 100_00, condition: .new, acceptsOffers: false), 60_00,
      .offersClosed
    ),
    (
      Listing(id: "L", title: "t", sellerID: "s", priceMinor: 100_00, condition: .new), 49_99,
      .tooLow(minimumMinor: 50_00)
    ),
    (Listing(id: "L", title: "t", sellerID: "s", priceMinor: 100_00, condition: .new), 100_00, .notBelowPrice),
  ])
  func offersOutsideTheRulesAreRefusedAndTracked(listing: Listing, amount: Int, error: OfferError) {
    let tracker = RecordingTracker()
    let presenter = ListingDetailPresenter(listing: listing, userID: "U", tracker: tracker)
    #expect(throws: error) { try presenter.makeOffer(amountMinor: amount) }
    #expect(presenter.state.lastOfferMinor == nil)
    tracker.expectReceived(
      by: DLService.collector,
      [
        (
          "offer_rejected",
          ["listing_id": "L", "offer": .double(Double(amount) / 100), "reason": .string(error.reason)]
        )
      ])
  }

  @Test func aValidOfferIsSent() throws {
    let tracker = RecordingTracker()
    let presenter = ListingDetailPresenter(listing: jacket, userID: "U", tracker: tracker)
    try presenter.makeOffer(amountMinor: 300_00)
    presenter.messageSeller()
    #expect(presenter.state.lastOfferMinor == 300_00)
    tracker.expectReceived(
      by: DLService.collector,
      [
        ("offer_made", ["listing_id": "L1", "offer": 300.0, "discount_percent": 25]),
        ("seller_messaged", ["listing_id": "L1"]),
      ])
  }

  @Test func buyingTracksAPurchaseInEachServicesShape() throws {
    let tracker = RecordingTracker()
    let presenter = ListingDetailPresenter(listing: jacket, userID: "U9", tracker: tracker)
    try presenter.buy(orderID: "DL-1", shippingMinor: 25_00)
    let order: EventParameters = [
      "transaction_id": "DL-1", "currency": "TRY", "value": 425.0, "shipping": 25.0,
      "items": [
        [
          "item_id": "L1", "item_name": "Denim jacket", "item_variant": "good", "price": 400.0, "quantity": 1,
          "seller_id": "S1",
        ]
      ],
    ]
    tracker.expectReceived(by: DLService.collector, [("purchase", order)])
    tracker.expectReceived(by: DLService.firebase, [("purchase", order)])
    tracker.expectReceived(
      by: DLService.mixpanel,
      [
        (
          "Listing Purchased",
          [
            "Order ID": "DL-1", "Currency": "TRY", "Revenue": 425.0, "Shipping": 25.0,
            "Products": [
              [
                "Product ID": "L1", "Name": "Denim jacket", "Variant": "good", "Price": 400.0, "Quantity": 1,
                "seller_id": "S1",
              ]
            ],
          ]
        )
      ])
  }

  @Test func aSoldListingCannotBeBought() {
    let tracker = RecordingTracker()
    var sold = jacket
    sold.isSold = true
    #expect(throws: OfferError.sold) {
      try ListingDetailPresenter(listing: sold, userID: "U9", tracker: tracker).buy(orderID: "DL-2")
    }
    tracker.expectNames(["offer_rejected"])
  }

  @Test func theMinimumOfferIsHalfThePriceRoundedUp() {
    #expect(Listing(id: "L", title: "t", sellerID: "s", priceMinor: 101, condition: .worn).minimumOfferMinor == 51)
  }
}
