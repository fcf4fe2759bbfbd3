import CoreTrackerTesting
import TYTracker
import Testing

private enum Probe: CoreTrackable {
  case viewed
  var name: String { "probe_viewed" }
  var parameters: EventParameters { ["screen": "home", "product": "event-wins"] }
  func payload(for service: ServiceID) -> ServicePayload? {
    service == TYService.firebase ? ServicePayload(name: "screen_view", parameters: ["screen_name": "home"]) : nil
  }
}

@Suite("TYTracker")
struct TYTrackerTests {
  @Test func everyInjectedServiceGetsTrendyolsDefaultsAfterTheEventsOwnParameters() async {
    let log = RecordingService(id: TYService.log)
    let firebase = RecordingService(id: TYService.firebase)
    let tracker = TYTracker(
      log: log, services: [firebase], configuration: TrackerConfiguration(emitsSessionEvents: false))
    tracker.track(Probe.viewed)
    await tracker.flush()
    #expect(
      log.events.map { $0.parameters.pairs.map { "\($0.key)=\($0.value.text)" } } == [
        ["screen=home", "product=event-wins", "business_unit=marketplace"]
      ])
    #expect(
      firebase.events.map { $0.parameters.pairs.map { "\($0.key)=\($0.value.text)" } } == [
        ["screen_name=home", "product=trendyol", "business_unit=marketplace"]
      ])
    #expect(firebase.names == ["screen_view"])
    #expect(tracker.base.stats.routed == 1)
  }

  /// Counters reach every injected service through the product's wrapper (they were silently
  /// dropped by it once: the wrapper did not forward them).
  @Test func countersReachEveryInjectedService() async {
    let log = RecordingService(id: TYService.log)
    let collector = RecordingService(id: TYService.collector)
    let tracker = TYTracker(
      log: log, collector: collector, configuration: TrackerConfiguration(emitsSessionEvents: false))
    tracker.count("Foregrounded app")
    tracker.count("Foregrounded app", by: 2)
    await tracker.flush()
    #expect(
      collector.counters.map(\.amount) == [1, 2]
        && log.counters.map(\.name) == ["Foregrounded app", "Foregrounded app"])
  }

  @Test func sharedDefaultsToATYTrackerAndCanBeBootstrapped() {
    #expect(TYTracker.shared is TYTracker)
    let recording = RecordingTracker()
    TYTracker.bootstrap(recording)
    #expect(TYTracker.shared as? RecordingTracker === recording)
  }

  @Test func serviceIdentifiersAreDistinct() {
    #expect(Set([TYService.log, TYService.collector, TYService.firebase, TYService.mixpanel]).count == 4)
  }
}

/// A development build checks every event against Trendyol's plan (`Plans/TYTracker.json`, as
/// `TYPlan.plan`) and says each violation; production builds do not check.
@Suite("TYTracker and its tracking plan")
struct TYTrackerPlanTests {
  @Test(arguments: [TrackingEnvironment.development, .production])
  func developmentBuildsSayWhatBreaksThePlan(environment: TrackingEnvironment) async {
    let warnings = RecordedWarnings()
    let log = RecordingService(id: TYService.log)
    let tracker = TYTracker(
      log: log,
      configuration: TrackerConfiguration(
        environment: environment, emitsSessionEvents: false, warning: warnings.record))
    tracker.track(TYPlan.ProductSizeSelected(productID: "p-1", size: "42"))
    tracker.track(Probe.viewed)
    await tracker.flush()
    #expect(log.names == ["product_size_selected", "probe_viewed"], "never dropped on the device")
    if environment == .development {
      #expect(
        warnings.lines == [
          "CoreTracker: probe_viewed breaks the tracking plan: name: probe_viewed is not in the tracking plan (ty v1)"
        ])
    } else {
      #expect(warnings.lines.isEmpty)
    }
  }
}
