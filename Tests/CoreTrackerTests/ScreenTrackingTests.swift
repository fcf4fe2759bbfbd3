import CoreTracker
import CoreTrackerTesting
import Testing

/// The platform-neutral part of SwiftUI's `.trackScreen`: the event it tracks and when.
@Suite("Screen tracking")
struct ScreenTrackingTests {
  @Test(arguments: [
    (["appear"], 1),
    (["appear", "appear", "appear"], 1),
    (["appear", "disappear", "appear"], 2),
    (["disappear", "appear", "disappear", "disappear", "appear", "appear"], 2),
    ([String](), 0),
  ])
  func oneViewPerAppearance(calls: [String], views: Int) {
    var visibility = ScreenVisibility()
    var tracked = 0
    for call in calls {
      if call == "appear" {
        if visibility.appear() { tracked += 1 }
      } else {
        visibility.disappear()
      }
    }
    #expect(tracked == views)
  }

  @Test func theEventIsAScreenView() async {
    let harness = Harness()
    harness.tracker.track(ScreenViewEvent("product_detail", parameters: ["product_id": "P1"]))
    await harness.flush()
    let event = harness.collector.events.first { $0.name == "product_detail" }
    #expect(event?.kind == .screenView)
    #expect(event?.parameters == ["product_id": "P1"])
  }
}
