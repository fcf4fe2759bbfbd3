public import DLTracker

/// Why an offer was not sent.
public enum OfferError: Error, Equatable, Sendable {
  /// The listing is sold.
  case sold
  /// The seller does not take offers.
  case offersClosed
  /// Below half the asking price.
  case tooLow(minimumMinor: Int)
  /// At or above the asking price: buy it instead.
  case notBelowPrice

  /// A short reason, as tracked.
  public var reason: String {
    switch self {
    case .sold: "sold"
    case .offersClosed: "offers_closed"
    case .tooLow: "too_low"
    case .notBelowPrice: "not_below_price"
    }
  }
}

/// What the listing view shows.
public struct ListingDetailViewState: Sendable, Equatable {
  /// Whether the user likes the listing.
  public var isLiked: Bool
  /// How many people like it.
  public var likeCount: Int
  /// The last offer the user sent, minor units.
  public var lastOfferMinor: Int?
  /// A message after an action.
  public var message: String?
}

/// The Dolap Lite listing screen: like, offer, message the seller.
///
/// ```swift
/// let presenter = ListingDetailPresenter(listing: listing, userID: "u-17")  // DLTracker.shared
/// presenter.viewDidAppear()
/// presenter.toggleLike()
/// try presenter.makeOffer(amountMinor: 150_00)
/// ```
public final class ListingDetailPresenter {
  /// The listing shown.
  public let listing: Listing
  /// What the view shows now.
  public private(set) var state: ListingDetailViewState
  private let userID: String
  private let tracker: any CoreTracker

  /// Creates the presenter for the signed-in `userID`; `tracker` defaults to Dolap Lite's shared tracker.
  public init(listing: Listing, userID: String, likeCount: Int = 0, tracker: any CoreTracker = DLTracker.shared) {
    self.listing = listing
    self.userID = userID
    self.tracker = tracker
    state = ListingDetailViewState(isLiked: false, likeCount: likeCount)
  }

  /// The screen appeared.
  public func viewDidAppear() {
    tracker.track(ListingDetailEvent.viewed(listing))
  }

  /// Likes or unlikes the listing.
  public func toggleLike() {
    state.isLiked.toggle()
    state.likeCount += state.isLiked ? 1 : -1
    tracker.track(state.isLiked ? ListingDetailEvent.liked(listing, userID: userID) : .unliked(listing))
  }

  /// Sends an offer: at least half the asking price and below it, on a listing open to offers.
  public func makeOffer(amountMinor: Int) throws(OfferError) {
    let error: OfferError? =
      if listing.isSold {
        .sold
      } else if !listing.acceptsOffers {
        .offersClosed
      } else if amountMinor < listing.minimumOfferMinor {
        .tooLow(minimumMinor: listing.minimumOfferMinor)
      } else if amountMinor >= listing.priceMinor {
        .notBelowPrice
      } else {
        nil
      }
    if let error {
      state.message = "Offer not sent (\(error.reason))"
      tracker.track(ListingDetailEvent.offerRejected(listing, amountMinor: amountMinor, reason: error.reason))
      throw error
    }
    state.lastOfferMinor = amountMinor
    state.message = "Offer sent"
    tracker.track(ListingDetailEvent.offerMade(listing, amountMinor: amountMinor))
  }

  /// Buys the listing at its price with `shippingMinor` shipping, as order `orderID`; a sold
  /// listing cannot be bought (the attempt is tracked as a rejected offer would be: with its reason).
  public func buy(orderID: String, shippingMinor: Int = 0) throws(OfferError) {
    guard !listing.isSold else {
      state.message = "Already sold"
      tracker.track(ListingDetailEvent.offerRejected(listing, amountMinor: listing.priceMinor, reason: "sold"))
      throw .sold
    }
    let order = CommerceOrder(
      transactionID: orderID, currency: "TRY", items: [listing.commerceItem],
      value: Double(listing.priceMinor + max(0, shippingMinor)) / 100, shipping: Double(max(0, shippingMinor)) / 100)
    state.message = "Bought"
    tracker.track(ListingDetailEvent.purchased(listing, order: order))
  }

  /// Opens a conversation with the seller.
  public func messageSeller() {
    tracker.track(ListingDetailEvent.sellerMessaged(listing))
  }
}
