public import DLTracker

/// A seller as the profile screen shows them.
public struct Seller: Sendable, Hashable {
  /// The seller's id.
  public var id: String
  /// The shop name.
  public var shopName: String
  /// The contact phone: personal data, tracked only as such.
  public var phone: String
  /// Active listings.
  public var listingCount: Int
  /// Followers.
  public var followerCount: Int

  /// Creates a seller.
  public init(id: String, shopName: String, phone: String, listingCount: Int, followerCount: Int) {
    self.id = id
    self.shopName = shopName
    self.phone = phone
    self.listingCount = listingCount
    self.followerCount = followerCount
  }
}

/// Why a report was not sent.
public enum SellerProfileError: Error, Equatable, Sendable {
  /// Ratings are whole stars from 1 to 5.
  case ratingOutOfRange(Int)
  /// Users cannot rate or follow themselves.
  case ownProfile
}

/// Why a user reports a seller.
public enum ReportReason: String, Sendable, CaseIterable {
  case counterfeit, misleading, abusive, other
}

/// What the seller profile screen tracks.
public enum SellerProfileEvent: CoreTrackable, Equatable {
  case viewed(Seller)
  case followChanged(Seller, isFollowing: Bool)
  case rated(Seller, stars: Int)
  case reported(Seller, reason: ReportReason)
  case called(Seller)

  /// The plan's event for this case (``DLPlan``, generated from `Plans/DLTracker.json`): its
  /// name, kind, typed parameters and services (a report goes to the collector and the log only).
  public var planned: any CoreTrackable {
    switch self {
    case .viewed(let seller): DLPlan.SellerProfileViewed(sellerID: seller.id, listingCount: seller.listingCount)
    case .followChanged(let seller, true): DLPlan.SellerFollowed(sellerID: seller.id)
    case .followChanged(let seller, false): DLPlan.SellerUnfollowed(sellerID: seller.id)
    case .rated(let seller, let stars): DLPlan.SellerRated(sellerID: seller.id, stars: stars)
    case .reported(let seller, let reason): DLPlan.SellerReported(sellerID: seller.id, reason: reason.rawValue)
    // `phone` is personal data (the plan says so): DLTracker's privacy stage drops it before any service.
    case .called(let seller): DLPlan.SellerCalled(sellerID: seller.id, phone: seller.phone)
    }
  }

  public var name: String { planned.name }
  public var kind: EventKind { planned.kind }
  public var parameters: EventParameters { planned.parameters }
  public var services: ServiceSelection { planned.services }
}

/// What the profile view shows.
public struct SellerProfileViewState: Sendable, Equatable {
  /// Whether the user follows the seller.
  public var isFollowing: Bool
  /// Followers, as shown.
  public var followerCount: Int
  /// The user's rating, once given.
  public var myRating: Int?
  /// Whether the user reported the seller.
  public var hasReported: Bool
}

/// The seller profile screen: follow, rate, report, call.
public final class SellerProfilePresenter {
  /// The seller shown.
  public let seller: Seller
  /// What the view shows now.
  public private(set) var state: SellerProfileViewState
  private let viewerID: String
  private let tracker: any CoreTracker

  /// Creates the presenter for `viewerID`; `tracker` defaults to Dolap Lite's shared tracker.
  public init(seller: Seller, viewerID: String, tracker: any CoreTracker = DLTracker.shared) {
    self.seller = seller
    self.viewerID = viewerID
    self.tracker = tracker
    state = SellerProfileViewState(isFollowing: false, followerCount: seller.followerCount, hasReported: false)
  }

  /// The screen appeared.
  public func viewDidAppear() {
    tracker.track(SellerProfileEvent.viewed(seller))
  }

  /// Follows or unfollows.
  public func toggleFollow() throws(SellerProfileError) {
    guard viewerID != seller.id else { throw .ownProfile }
    state.isFollowing.toggle()
    state.followerCount += state.isFollowing ? 1 : -1
    tracker.track(SellerProfileEvent.followChanged(seller, isFollowing: state.isFollowing))
  }

  /// Rates the seller, 1 to 5 stars; a new rating replaces the old one.
  public func rate(stars: Int) throws(SellerProfileError) {
    guard viewerID != seller.id else { throw .ownProfile }
    guard (1...5).contains(stars) else { throw .ratingOutOfRange(stars) }
    state.myRating = stars
    tracker.track(SellerProfileEvent.rated(seller, stars: stars))
  }

  /// Reports the seller once; later reports are ignored.
  public func report(_ reason: ReportReason) {
    guard !state.hasReported else { return }
    state.hasReported = true
    tracker.track(SellerProfileEvent.reported(seller, reason: reason))
  }

  /// Starts a call to the seller.
  public func call() {
    tracker.track(SellerProfileEvent.called(seller))
  }
}
