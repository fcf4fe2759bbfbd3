import CoreTracker
import CoreTrackerTesting
import Testing

private enum LikeEvent: CoreTrackable {
  case liked(id: String)
  var name: String { "liked" }
  var parameters: EventParameters {
    switch self {
    case .liked(let id): ["item_id": .string(id), "source": "feed"]
    }
  }
  var services: ServiceSelection { .allExcept([ServiceID("log")]) }
  func payload(for service: ServiceID) -> ServicePayload? {
    service == ServiceID("firebase") ? ServicePayload(name: "select_content", parameters: ["item_id": "x"]) : nil
  }
}

@Suite("Test kit")
struct TestKitTests {
  @Test func recordingTrackerShowsEachServicesShape() {
    let tracker = RecordingTracker()
    tracker.identify(userID: "u1")
    tracker.track(LikeEvent.liked(id: "7"))
    #expect(tracker.names == ["liked"])
    #expect(tracker.events.first?.userID == "u1")
    #expect(
      tracker.payloads(for: ServiceID("firebase")) == [
        ServicePayload(name: "select_content", parameters: ["item_id": "x"])
      ])
    #expect(tracker.payloads(for: ServiceID("collector")).first?.name == "liked")
    #expect(tracker.payloads(for: ServiceID("log")).isEmpty)
    tracker.expectReceived(by: ServiceID("collector"), [("liked", ["item_id": "7", "source": "feed"])])
  }

  @Test func aWrongKeyFailsEvenWhenTheValueIsRight() {
    let tracker = RecordingTracker()
    tracker.track(LikeEvent.liked(id: "7"))
    withKnownIssue {
      tracker.expectReceived(by: ServiceID("collector"), [("liked", ["itemId": "7", "source": "feed"])])
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("key 'item_id' = \"7\", expected key 'itemId' = \"7\"") }
    }
  }

  @Test(
    arguments: [
      (
        ["liked"], [("liked", ["item_id": "7", "source": "web"] as EventParameters)],
        "parameter 'source' = \"feed\", expected \"web\""
      ),
      (["liked"], [("liked", ["item_id": "7"] as EventParameters)], "unexpected parameters: source = \"feed\""),
      (
        ["liked"], [("liked", ["item_id": "7", "source": "feed", "x": 1] as EventParameters)], "lacks parameters: x = 1"
      ),
      (
        ["liked"], [("viewed", ["item_id": "7", "source": "feed"] as EventParameters)],
        "named 'liked', expected 'viewed'"
      ),
      (["liked"], [], "received 1 event(s)"),
      (
        ["liked", "with items"],
        [("liked", ["item_id": "7", "source": "feed", "items": [["item_id": "7", "price": 9.9]]] as EventParameters)],
        "parameter 'items[0].price' = 9.99, expected 9.9"
      ),
      (
        ["liked", "with items"],
        [
          ("liked", ["item_id": "7", "source": "feed", "items": [["price": 9.99, "item_id": "7"]]] as EventParameters)
        ],
        "parameter 'items[0]' = key 'item_id', expected key 'price'"
      ),
    ] as [([String], [(String, EventParameters)], String)])
  func failureMessagesSayWhatDiffers(tracked: [String], expected: [(String, EventParameters)], message: String) {
    let tracker = RecordingTracker()
    if tracked.count > 1 {
      tracker.track(
        GenericEvent(
          "liked", parameters: ["item_id": "7", "source": "feed", "items": [["item_id": "7", "price": 9.99]]]))
    } else {
      tracker.track(LikeEvent.liked(id: "7"))
    }
    withKnownIssue {
      tracker.expectReceived(by: ServiceID("collector"), expected.map { (name: $0.0, parameters: $0.1) })
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains(message) }
    }
  }

  @Test func unimplementedTrackerFailsOnUnexpectedEvents() {
    withKnownIssue {
      UnimplementedTracker().track(LikeEvent.liked(id: "1"))
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("Unexpected event 'liked'") }
    }
    UnimplementedTracker(allowing: ["liked"]).track(LikeEvent.liked(id: "1"))
  }

  @Test func recordingTrackerKeepsStateAndResets() async {
    let tracker = RecordingTracker()
    tracker.setUserProperty("gold", forKey: "tier")
    tracker.setDefaultParameters(["a": 1])
    tracker.setConsent(.optedOut)
    await tracker.flush()
    #expect(tracker.userProperties["tier"] == "gold")
    #expect(tracker.defaultParameters["a"] == 1)
    #expect(tracker.consent == .optedOut)
    #expect(tracker.flushCount == 1)
    tracker.track(LikeEvent.liked(id: "1"))
    tracker.reset()
    #expect(tracker.events.isEmpty)
    tracker.expectNames([])
  }
}
