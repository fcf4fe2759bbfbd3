import CoreTrackerTesting
import DLProductDetail
import DLTracker
import Testing

/// Every event the listing screen sends is one Dolap Lite's plan (`Plans/DLTracker.json`) accepts:
/// a development build, which checks each event, says nothing.
@Suite("The listing screen and Dolap Lite's tracking plan")
struct ListingPlanTests {
  @Test func everyEventTheScreenSendsIsInThePlan() async throws {
    let warnings = RecordedWarnings()
    let log = RecordingService(id: DLService.log)
    let tracker = DLTracker(log: log, configuration: warnings.developmentConfiguration)
    let jacket = Listing(id: "L1", title: "Denim jacket", sellerID: "S1", priceMinor: 400_00, condition: .likeNew)
    let presenter = ListingDetailPresenter(listing: jacket, userID: "u-1", tracker: tracker)
    presenter.viewDidAppear()
    presenter.toggleLike()
    presenter.toggleLike()
    try? presenter.makeOffer(amountMinor: 100_00)  // too low: rejected
    try presenter.makeOffer(amountMinor: 350_00)
    presenter.messageSeller()
    try presenter.buy(orderID: "O-1", shippingMinor: 30_00)
    await tracker.flush()
    #expect(
      Set(log.names).isSuperset(of: ["listing_viewed", "listing_liked", "offer_made", "purchase"]), "\(log.names)")
    #expect(warnings.lines.isEmpty, "\(warnings.lines)")
    // The check is real: an event outside the plan is named.
    tracker.track(DLPlanProbe())
    await tracker.flush()
    #expect(warnings.lines.count == 1 && warnings.lines[0].contains("probe is not in the tracking plan (dl v1)"))
  }
}

private struct DLPlanProbe: CoreTrackable {
  var name: String { "probe" }
  var parameters: EventParameters { [:] }
}
