public import DLTracker

/// A second-hand listing as the Dolap Lite detail screen shows it.
public struct Listing: Sendable, Hashable {
  /// The condition the seller declared.
  public enum Condition: String, Sendable, CaseIterable {
    case new
    case likeNew = "like_new"
    case good, worn
  }

  /// The listing id.
  public var id: String
  /// The title the seller wrote.
  public var title: String
  /// The seller's id.
  public var sellerID: String
  /// The asking price in minor units.
  public var priceMinor: Int
  /// The declared condition.
  public var condition: Condition
  /// Whether the seller accepts offers.
  public var acceptsOffers: Bool
  /// Whether it is already sold.
  public var isSold: Bool

  /// Creates a listing.
  public init(
    id: String,
    title: String,
    sellerID: String,
    priceMinor: Int,
    condition: Condition,
    acceptsOffers: Bool = true,
    isSold: Bool = false
  ) {
    self.id = id
    self.title = title
    self.sellerID = sellerID
    self.priceMinor = priceMinor
    self.condition = condition
    self.acceptsOffers = acceptsOffers
    self.isSold = isSold
  }

  /// The lowest offer the app lets a buyer send: half the asking price, rounded up.
  public var minimumOfferMinor: Int { (priceMinor + 1) / 2 }

  /// The listing as the one item of an order: its id, title, condition (as the variant) and price.
  public var commerceItem: CommerceItem {
    CommerceItem(
      id: id, name: title, variant: condition.rawValue, price: Double(priceMinor) / 100, quantity: 1,
      custom: ["seller_id": .string(sellerID)])
  }
}
