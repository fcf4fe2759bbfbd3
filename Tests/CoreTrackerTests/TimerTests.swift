import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

/// A checkout whose completion measures how long it took.
enum CheckoutStep: CoreTrackable {
  case completed(orderID: String)
  case abandoned

  var name: String {
    switch self {
    case .completed: "checkout_completed"
    case .abandoned: "checkout_abandoned"
    }
  }

  var parameters: EventParameters {
    switch self {
    case .completed(let order): ["order_id": .string(order)]
    case .abandoned: [:]
    }
  }

  var isTimed: Bool { true }

  func payload(for service: ServiceID) -> ServicePayload? {
    guard service == .mixpanel, case .completed = self else { return nil }
    return ServicePayload(name: "Checkout Completed")
  }
}

@Suite("Timed events")
struct TimerTests {
  @Test(arguments: [(12.5, 12_500), (0.0, 0), (-3.0, 0), (1_200.0, 1_200_000)] as [(Double, Int)])
  func aStartedTimerGivesTheNextEventOfItsNameItsDuration(seconds: Double, milliseconds: Int) async {
    let harness = Harness()
    harness.tracker.startTimer(for: "checkout_completed")
    harness.clock.advance(by: seconds)
    harness.tracker.track(CheckoutStep.completed(orderID: "o-1"))
    harness.tracker.track(CheckoutStep.completed(orderID: "o-2"))
    await harness.flush()

    let events = harness.collector.events
    #expect(events.map { $0.parameters["duration_ms"] } == [.int(milliseconds), nil])
    // Every service's own shape gets it too.
    #expect(harness.mixpanel.events.first?.parameters["duration_ms"] == .int(milliseconds))
    #expect(harness.tracker.stats.untimed == 1)  // o-2: its timer was used by o-1
  }

  @Test func aTimedEventWithoutATimerGoesWithoutDurationAndIsCounted() async {
    let harness = Harness()
    harness.tracker.track(CheckoutStep.abandoned)
    harness.tracker.track(GenericEvent("not_timed"))
    await harness.flush()
    #expect(harness.collector.events.allSatisfy { $0.parameters["duration_ms"] == nil })
    #expect(harness.tracker.stats.untimed == 1)
  }

  @Test func anEventThatNamesItsOwnDurationKeepsIt() async {
    let harness = Harness()
    harness.tracker.startTimer(for: "video_watched")
    harness.clock.advance(by: 5)
    harness.tracker.track(GenericEvent("video_watched", parameters: ["duration_ms": 42]))
    await harness.flush()
    #expect(harness.collector.events.first?.parameters["duration_ms"] == 42)
  }

  @Test func startingATimerAgainRestartsIt() async {
    let harness = Harness()
    harness.tracker.startTimer(for: "checkout_completed")
    harness.clock.advance(by: 10)
    harness.tracker.startTimer(for: "checkout_completed")
    harness.clock.advance(by: 2)
    harness.tracker.track(CheckoutStep.completed(orderID: "o-1"))
    await harness.flush()
    #expect(harness.collector.events.first?.parameters["duration_ms"] == 2_000)
  }

  @Test func aTimerSurvivesBackgroundingWithinTheSessionButNotTheSessionsEnd() async {
    let harness = Harness()
    harness.tracker.track(GenericEvent("opened"))
    harness.tracker.startTimer(for: "checkout_completed")
    harness.tracker.sendSoon()  // what the app does when it goes to the background
    harness.clock.advance(by: 29 * 60)
    harness.tracker.track(CheckoutStep.completed(orderID: "in-session"))

    harness.tracker.startTimer(for: "checkout_completed")
    harness.clock.advance(by: 31 * 60)  // the session times out before the event
    harness.tracker.track(CheckoutStep.completed(orderID: "next-session"))

    harness.tracker.startTimer(for: "checkout_completed")
    harness.tracker.endSession()
    harness.tracker.track(CheckoutStep.completed(orderID: "after-end"))
    await harness.flush()

    let durations = harness.collector.events.filter { $0.name == "checkout_completed" }.map {
      $0.parameters["duration_ms"]
    }
    #expect(durations == [.int(29 * 60 * 1000), nil, nil])
    #expect(harness.tracker.stats.untimed == 2)
  }

  @Test func aRecordingTrackerRecordsStartedTimers() {
    let tracker = RecordingTracker()
    tracker.startTimer(for: "checkout_completed")
    #expect(tracker.startedTimers == ["checkout_completed"])
  }
}
