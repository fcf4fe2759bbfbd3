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

  @Test func sharedCanBeBootstrapped() {
    let recording = RecordingTracker()
    DLTracker.bootstrap(recording)
    #expect(DLTracker.shared as? RecordingTracker === recording)
  }
}
