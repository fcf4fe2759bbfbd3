public import DLTracker

/// What the Dolap Lite listing screen tracks.
///
/// The like-event follows the Moments design: Firebase receives `select_content` with
/// `item_id` "listing-id-<id>-user-id-<user>" and `item_name` "listing-like"; Mixpanel its own
/// names; every other service the uniform serialisation. A purchase is GA4's `purchase` with the
/// listing as its one item (what the collector's revenue report counts); Mixpanel gets
/// `Listing Purchased` in its title-case style.
public enum ListingDetailEvent: CoreTrackable, Equatable {
  case viewed(Listing)
  case liked(Listing, userID: String)
  case unliked(Listing)
  case offerMade(Listing, amountMinor: Int)
  case offerRejected(Listing, amountMinor: Int, reason: String)
  case sellerMessaged(Listing)
  case purchased(Listing, order: CommerceOrder)

  /// The plan's event for this case (``DLPlan``, generated from `Plans/DLTracker.json` on every
  /// build): its name, kind and typed parameters. A purchase keeps the commerce vocabulary's own
  /// parameters (``CommerceOrder/parameters``), which the plan's `purchase` describes.
  public var planned: any CoreTrackable {
    switch self {
    case .viewed(let listing):
      DLPlan.ListingViewed(
        listingID: listing.id, sellerID: listing.sellerID, price: Double(listing.priceMinor) / 100,
        condition: listing.condition.rawValue)
    case .liked(let listing, _): DLPlan.ListingLiked(listingID: listing.id)
    case .unliked(let listing): DLPlan.ListingUnliked(listingID: listing.id)
    case .sellerMessaged(let listing): DLPlan.SellerMessaged(listingID: listing.id)
    case .offerMade(let listing, let amount):
      DLPlan.OfferMade(
        listingID: listing.id, offer: Double(amount) / 100,
        discountPercent: 100 - amount * 100 / max(1, listing.priceMinor))
    case .offerRejected(let listing, let amount, let reason):
      DLPlan.OfferRejected(listingID: listing.id, offer: Double(amount) / 100, reason: reason)
    case .purchased(_, let order): CommerceEvent(name: "purchase", kind: .action, parameters: order.parameters)
    }
  }

  public var name: String { planned.name }
  public var kind: EventKind { planned.kind }
  public var parameters: EventParameters { planned.parameters }

  public func payload(for service: ServiceID) -> ServicePayload? {
    switch (self, service) {
    case (.liked(let listing, let userID), DLService.firebase):
      ServicePayload(
        name: "select_content",
        parameters: ["item_id": .string("listing-id-\(listing.id)-user-id-\(userID)"), "item_name": "listing-like"]
      )
    case (.liked(let listing, _), DLService.mixpanel):
      ServicePayload(
        name: "Listing Liked", parameters: ["Listing": .string(listing.id), "Seller": .string(listing.sellerID)])
    case (.purchased(_, let order), DLService.mixpanel):
      ServicePayload(name: "Listing Purchased", parameters: order.parameters(style: .titleCase))
    case (.viewed(let listing), DLService.firebase):
      ServicePayload(
        name: "view_item",
        parameters: [
          "item_id": .string(listing.id), "item_name": .string(listing.title),
          "price": .double(Double(listing.priceMinor) / 100), "currency": "TRY",
        ]
      )
    default:
      nil
    }
  }
}

/// An event given whole: the purchase, in the commerce vocabulary.
struct CommerceEvent: CoreTrackable {
  let name: String
  let kind: EventKind
  let parameters: EventParameters
}
