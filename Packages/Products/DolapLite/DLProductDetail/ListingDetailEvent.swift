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

  public var name: String {
    switch self {
    case .viewed: "listing_viewed"
    case .liked: "listing_liked"
    case .unliked: "listing_unliked"
    case .offerMade: "offer_made"
    case .offerRejected: "offer_rejected"
    case .sellerMessaged: "seller_messaged"
    case .purchased: "purchase"
    }
  }

  public var kind: EventKind {
    switch self {
    case .viewed: .screenView
    case .offerRejected: .event
    default: .action
    }
  }

  public var parameters: EventParameters {
    switch self {
    case .viewed(let listing):
      [
        "listing_id": .string(listing.id), "seller_id": .string(listing.sellerID),
        "price": .double(Double(listing.priceMinor) / 100), "condition": .string(listing.condition.rawValue),
      ]
    case .liked(let listing, _), .unliked(let listing), .sellerMessaged(let listing):
      ["listing_id": .string(listing.id)]
    case .offerMade(let listing, let amount):
      [
        "listing_id": .string(listing.id), "offer": .double(Double(amount) / 100),
        "discount_percent": .int(100 - amount * 100 / max(1, listing.priceMinor)),
      ]
    case .offerRejected(let listing, let amount, let reason):
      ["listing_id": .string(listing.id), "offer": .double(Double(amount) / 100), "reason": .string(reason)]
    case .purchased(_, let order):
      order.parameters
    }
  }

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
