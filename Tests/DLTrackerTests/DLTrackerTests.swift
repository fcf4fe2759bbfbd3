import CoreTrackerTesting
import DLTracker
import Testing

@Suite("DLTracker")
struct DLTrackerTests {
  @Test func dolapLiteSendsItsOwnDefaultsAndDropsPhoneNumbers() async {
    let log = RecordingService(id: DLService.log)
    let tracker = DLTracker(log: log)
    tracker.track(GenericEvent("seller_called", parameters: ["seller_id": "S1", "phone": "+90 555"]))
    await tracker.flush()
    let called = log.events.first { $0.name == "seller_called" }
    #expect(called?.parameters.pairs.map(\.key) == ["seller_id", "product", "business_unit", "host_app"])
    #expect(called?.parameters["product"] == "dolap_lite")
    #expect(log.names.first == "session_start")
  }

  @Test func theSameServiceInstanceCarriesEachProductsDefaults() async {
    let shared = RecordingService(id: DLService.log)
    let dolap = DLTracker(log: shared, configuration: TrackerConfiguration(emitsSessionEvents: false))
    dolap.track(GenericEvent("x"))
    await dolap.flush()
    #expect(shared.events.first?.parameters == DLTracker.defaultParameters)
  }

  /// The product's defaults are added by the engine before the pipeline: a default the app
  /// declares personal is scrubbed like any other value, for every service.
  @Test(arguments: [PrivacyStage.Action.drop, .hash(salt: "s")])
  func productDefaultsPassPrivacyScrubbing(action: PrivacyStage.Action) async {
    let log = RecordingService(id: DLService.log)
    let collector = RecordingService(id: DLService.collector)
    let tracker = DLTracker(
      log: log, collector: collector,
      configuration: TrackerConfiguration(
        defaultParameters: ["screen_set": "v2"], emitsSessionEvents: false,
        privacy: PrivacyStage(personalKeys: ["host_app"], action: action)))
    tracker.track(GenericEvent("x", parameters: ["id": "1"]))
    await tracker.flush()
    for service in [log, collector] {
      let parameters = service.events.first?.parameters
      // The app's defaults come first, then the product's, after the event's own.
      #expect(parameters?.pairs.map(\.key).prefix(4) == ["id", "screen_set", "product", "business_unit"])
      #expect(parameters?["host_app"] != "trendyol")
    }
  }

  @Test func sharedCanBeBootstrapped() {
    let recording = RecordingTracker()
    DLTracker.bootstrap(recording)
    #expect(DLTracker.shared as? RecordingTracker === recording)
  }
}
