import CoreTrackerTesting
import DLSellerProfile
import DLTracker
import Testing

@Suite("Dolap Lite seller profile")
struct SellerProfilePresenterTests {
  let seller = Seller(id: "S1", shopName: "Retro", phone: "+90 555 000 0000", listingCount: 12, followerCount: 100)

  @Test func followingTogglesAndTracks() throws {
    let tracker = RecordingTracker()
    let presenter = SellerProfilePresenter(seller: seller, viewerID: "U1", tracker: tracker)
    presenter.viewDidAppear()
    try presenter.toggleFollow()
    #expect(presenter.state.isFollowing && presenter.state.followerCount == 101)
    try presenter.toggleFollow()
    #expect(presenter.state.followerCount == 100)
    tracker.expectReceived(
      by: DLService.collector,
      [
        ("seller_profile_viewed", ["seller_id": "S1", "listing_count": 12]),
        ("seller_followed", ["seller_id": "S1"]),
        ("seller_unfollowed", ["seller_id": "S1"]),
      ])
  }

  @Test(arguments: [0, 6, -1])
  func ratingsOutsideOneToFiveAreRefusedWithoutTracking(stars: Int) {
    let presenter = SellerProfilePresenter(seller: seller, viewerID: "U1", tracker: UnimplementedTracker())
    #expect(throws: SellerProfileError.ratingOutOfRange(stars)) { try presenter.rate(stars: stars) }
    #expect(presenter.state.myRating == nil)
  }

  @Test(arguments: 1...5)
  func validRatingsAreTracked(stars: Int) throws {
    let tracker = RecordingTracker()
    try SellerProfilePresenter(seller: seller, viewerID: "U1", tracker: tracker).rate(stars: stars)
    tracker.expectReceived(by: DLService.firebase, [("seller_rated", ["seller_id": "S1", "stars": .int(stars)])])
  }

  @Test func sellersCannotFollowOrRateThemselves() {
    let presenter = SellerProfilePresenter(seller: seller, viewerID: "S1", tracker: UnimplementedTracker())
    #expect(throws: SellerProfileError.ownProfile) { try presenter.toggleFollow() }
    #expect(throws: SellerProfileError.ownProfile) { try presenter.rate(stars: 5) }
  }

  @Test func reportsGoOnlyToTheCollectorAndTheLogAndOnlyOnce() {
    let tracker = RecordingTracker()
    let presenter = SellerProfilePresenter(seller: seller, viewerID: "U1", tracker: tracker)
    presenter.report(.counterfeit)
    presenter.report(.abusive)
    tracker.expectReceived(
      by: DLService.collector, [("seller_reported", ["seller_id": "S1", "reason": "counterfeit"])])
    tracker.expectReceived(by: DLService.log, [("seller_reported", ["seller_id": "S1", "reason": "counterfeit"])])
    tracker.expectReceived(by: DLService.firebase, [])
    tracker.expectReceived(by: DLService.mixpanel, [])
  }

  @Test func callingCarriesThePhoneForThePrivacyStageToRemove() {
    let tracker = RecordingTracker()
    SellerProfilePresenter(seller: seller, viewerID: "U1", tracker: tracker).call()
    tracker.expectReceived(
      by: DLService.collector, [("seller_called", ["seller_id": "S1", "phone": "+90 555 000 0000"])])
  }
}
