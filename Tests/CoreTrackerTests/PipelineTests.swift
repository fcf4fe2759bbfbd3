import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

@Suite("Pipeline")
struct PipelineTests {
  @Test func enrichmentStampsIdentityContextUserAndDefaults() async throws {
    let harness = Harness { $0.defaultParameters = ["product": "trendyol", "product_id": "default-loses"] }
    harness.tracker.identify(userID: "u-42")
    harness.tracker.setUserProperty("gold", forKey: "tier")
    harness.tracker.setDefaultParameter("ios", forKey: "channel")
    harness.tracker.track(ShopEvent.productViewed(id: "p-1"))
    await harness.flush()

    let event = try #require(harness.collector.events.first)
    #expect(event.name == "product_viewed")
    #expect(event.kind == .screenView)
    #expect(event.parameters.pairs.map(\.key) == ["product_id", "product", "channel"])
    #expect(event.parameters["product_id"] == "p-1")
    #expect(event.timestamp == harness.clock.date)
    #expect(event.id.millisecondsSince1970 == UInt64(harness.clock.date.timeIntervalSince1970 * 1000))
    #expect(event.context.appName == "Test")
    #expect(event.context.libraryName == "CoreTracker")
    #expect(event.anonymousID == "anon-1")
    #expect(event.userID == "u-42")
    #expect(event.userProperties["tier"] == "gold")
    #expect(event.session?.number == 1)
    #expect(event.payloads.isEmpty)
  }

  @Test func commandsApplyInTrackingOrder() async {
    let harness = Harness()
    harness.tracker.track(ShopEvent.productViewed(id: "before"))
    harness.tracker.identify(userID: "u-1")
    harness.tracker.track(ShopEvent.productViewed(id: "after"))
    harness.tracker.identify(userID: nil)
    harness.tracker.track(ShopEvent.productViewed(id: "signed-out"))
    await harness.flush()
    #expect(harness.collector.events.map(\.userID) == [nil, "u-1", nil])
  }

  @Test func eachServiceGetsItsOwnShapeAndTheRestTheUniformOne() async {
    let harness = Harness()
    harness.tracker.track(ShopEvent.liked(momentID: "m7", userID: "u3"))
    await harness.flush()

    #expect(harness.firebase.names == ["select_content"])
    #expect(
      harness.firebase.events.first?.parameters.pairs.map { "\($0.key)=\($0.value.text)" }
        == ["item_id=moment-id-m7-user-id-u3", "item_name=moment-like"]
    )
    #expect(harness.mixpanel.names == ["Moment Liked"])
    #expect(harness.collector.names == ["moment_liked"])
    #expect(harness.collector.events.first?.parameters == ["moment_id": "m7"])
    // One event, one id, whatever the shape.
    #expect(Set([harness.firebase, harness.mixpanel, harness.collector].compactMap { $0.events.first?.id }).count == 1)
  }

  @Test func routingFollowsTheEventsSelection() async {
    let harness = Harness()
    harness.tracker.track(ShopEvent.internalOnly)
    harness.tracker.track(GenericEvent("not_to_firebase", services: .allExcept([.firebase])))
    await harness.flush()
    #expect(harness.collector.names == ["internal_only", "not_to_firebase"])
    #expect(harness.mixpanel.names == ["not_to_firebase"])
    #expect(harness.firebase.names == [])
    #expect(harness.tracker.stats.services[.collector]?.received == 2)
    #expect(harness.tracker.stats.services[.firebase]?.received == 0)
  }

  @Test func anEventForNoKnownServiceIsCountedNotLost() async {
    let harness = Harness()
    harness.tracker.track(GenericEvent("orphan", services: [ServiceID("adjust")]))
    await harness.flush()
    let stats = harness.tracker.stats
    #expect(stats.dropped(.noService) == 1)
    #expect(stats.routed == 0)
  }

  @Test func optOutDropsEverythingAndCountsIt() async {
    let harness = Harness()
    harness.tracker.track(ShopEvent.productViewed(id: "1"))
    await harness.tracker.handedOver()  // "1" reached the services before the opt-out
    harness.tracker.setConsent(.optedOut)
    harness.tracker.track(ShopEvent.productViewed(id: "2"))
    harness.tracker.track(ShopEvent.productViewed(id: "3"))
    harness.tracker.setConsent(.granted)
    harness.tracker.track(ShopEvent.productViewed(id: "4"))
    await harness.flush()
    #expect(harness.collector.events.compactMap { $0.parameters["product_id"]?.text } == ["1", "4"])
    #expect(harness.tracker.stats.dropped(.consent) == 2)
  }

  /// A withdrawal applies at once: an event tracked before it but not yet handed over is dropped.
  @Test func anOptOutAppliesToWhatIsNotHandedOverYet() async {
    let gate = GateService()
    let tracker = Tracker(services: [gate], configuration: TrackerConfiguration(emitsSessionEvents: false))
    tracker.track(GenericEvent("a"))
    gate.entered.wait()
    tracker.track(GenericEvent("b"))
    tracker.setConsent(.optedOut)
    gate.release.signal()
    await tracker.flush()
    #expect(gate.events.map(\.name) == ["a"])
    #expect(tracker.stats.dropped(.consent) == 1)
  }

  @Test func consentDeniedForOneServiceKeepsTheOthers() async {
    let harness = Harness { $0.consent = Consent(deniedServices: [.mixpanel]) }
    harness.tracker.track(ShopEvent.productViewed(id: "1"))
    harness.tracker.track(GenericEvent("mixpanel_only", services: [.mixpanel]))
    await harness.flush()
    #expect(harness.mixpanel.events.isEmpty)
    #expect(harness.collector.names == ["product_viewed"])
    let stats = harness.tracker.stats
    #expect(stats.services[.mixpanel]?.dropped[.consent] == 2)
    #expect(stats.dropped(.consent) == 1)  // the mixpanel-only event reached no service
    #expect(stats.routed == 1)
  }

  /// Names are measured in UTF-8 bytes, as the collector measures them: 129 `ç` are 129 characters
  /// but 258 bytes.
  @Test(arguments: [
    "", " leading", "trailing ", "tab\tinside", "new\nline", String(repeating: "x", count: 257),
    String(repeating: "ç", count: 129),
  ])
  func invalidEventNamesAreDropped(name: String) async {
    let harness = Harness()
    harness.tracker.track(GenericEvent(name))
    await harness.flush()
    #expect(harness.collector.events.isEmpty)
    #expect(harness.tracker.stats.dropped(.invalidName) == 1)
  }

  @Test(arguments: [
    "add_to_cart", "Foregrounded app", "çağrı_başladı", String(repeating: "x", count: 256),
    String(repeating: "ç", count: 128),
  ])
  func validNamesPass(name: String) async {
    let harness = Harness()
    harness.tracker.track(GenericEvent(name, parameters: [name: 1]))
    await harness.flush()
    #expect(harness.collector.names == [name])
  }

  @Test func invalidParameterKeysAndPayloadNamesAreDropped() async {
    let harness = Harness()
    harness.tracker.track(GenericEvent("ok", parameters: ["": 1]))
    harness.tracker.track(GenericEvent("ok", payloads: [.firebase: ServicePayload(name: " bad")]))
    harness.tracker.track(
      GenericEvent("ok", payloads: [.firebase: ServicePayload(name: "fine", parameters: ["bad\u{0}": 1])])
    )
    await harness.flush()
    let stats = harness.tracker.stats
    #expect(stats.dropped(.invalidParameter) == 2)
    #expect(stats.dropped(.invalidName) == 1)
    #expect(harness.collector.events.isEmpty)
  }

  @Test func personalDataIsDroppedByDefault() async throws {
    let harness = Harness()
    harness.tracker.setUserProperty("a@b.c", forKey: "email")
    harness.tracker.track(ShopEvent.checkout(total: 10, email: "ayse@example.com"))
    await harness.flush()
    let event = try #require(harness.collector.events.first)
    #expect(event.parameters.pairs.map(\.key) == ["total"])
    // Declared keys are personal in every event and in user properties.
    let keyed = Harness { $0.privacy = PrivacyStage(personalKeys: ["email"]) }
    keyed.tracker.setUserProperty("a@b.c", forKey: "email")
    keyed.tracker.track(GenericEvent("signup", parameters: ["email": "x@y.z", "plan": "pro"]))
    await keyed.flush()
    let signup = try #require(keyed.collector.events.first)
    #expect(signup.parameters.pairs.map(\.key) == ["plan"])
    #expect(signup.userProperties["email"] == nil)
  }

  @Test func personalDataCanBeHashedWithASalt() async throws {
    let harness = Harness { $0.privacy = PrivacyStage(personalKeys: ["phone"], action: .hash(salt: "s3cret")) }
    harness.tracker.track(ShopEvent.checkout(total: 10, email: "ayse@example.com"))
    harness.tracker.track(
      GenericEvent("call", payloads: [.firebase: ServicePayload(name: "call", parameters: ["phone": "+90555"])])
    )
    await harness.flush()
    let checkout = try #require(harness.collector.events.first)
    #expect(checkout.parameters["email"] == .string(Hashing.sha256Hex("s3cretayse@example.com")))
    #expect(checkout.parameters["email"] != "ayse@example.com")
    // A service's own shape is scrubbed as well.
    #expect(harness.firebase.events.last?.parameters["phone"] == .string(Hashing.sha256Hex("s3cret+90555")))
  }

  @Test func customStagesRunAfterValidationAndBeforePrivacy() async throws {
    struct AddEmail: PipelineStage {
      func process(_ event: inout TrackedEvent) -> StageDecision {
        event.parameters["email"] = "leak@example.com"
        event.parameters["stage"] = "custom"
        return .keep
      }
    }
    struct DropQA: PipelineStage {
      func process(_ event: inout TrackedEvent) -> StageDecision {
        event.name.hasPrefix("qa_") ? .drop(DropReason("qa_event")) : .keep
      }
    }
    let harness = Harness {
      $0.additionalStages = [DropQA(), AddEmail()]
      $0.privacy = PrivacyStage(personalKeys: ["email"])
    }
    harness.tracker.track(GenericEvent("qa_probe"))
    harness.tracker.track(GenericEvent("real"))
    await harness.flush()
    let event = try #require(harness.collector.events.first)
    #expect(harness.collector.names == ["real"])
    #expect(event.parameters.pairs.map(\.key) == ["stage"])
    #expect(harness.tracker.stats.dropped(DropReason("qa_event")) == 1)
  }

  @Test func statsBalance() async {
    let harness = Harness(sessionEvents: true) {
      $0.sampling = SamplingStage(rates: ["sampled": 0])
    }
    harness.tracker.track(GenericEvent("kept"))
    harness.tracker.track(GenericEvent("sampled"))
    harness.tracker.track(GenericEvent(""))
    harness.tracker.track(GenericEvent("nowhere", services: [ServiceID("none")]))
    await harness.flush()
    let stats = harness.tracker.stats
    #expect(stats.tracked == 4)
    #expect(stats.generated == 1)
    #expect(stats.routed == 2)
    #expect(stats.dropped == [.sampledOut: 1, .invalidName: 1, .noService: 1])
    #expect(stats.queued == 0)
    #expect(stats.tracked + stats.generated == stats.routed + stats.totalDropped + stats.queued)
    #expect(stats.services[.collector]?.delivered == 2)
  }
}

@Suite("Debug mode")
struct DebugModeTests {
  @Test func everyEventIsSaidTrackedHandedOrDroppedWithWhy() async {
    let lines = Locked<[String]>([])
    let harness = Harness {
      $0.sampling = SamplingStage(rates: ["sampled": 0])
      $0.privacy = PrivacyStage(personalKeys: ["email"])
      $0.debug = DebugLog { line in lines.withLock { $0.append(line) } }
    }
    harness.tracker.track(GenericEvent("kept", parameters: ["plan": "pro", "email": "a@b.c"]))
    harness.tracker.track(GenericEvent("sampled"))
    harness.tracker.track(GenericEvent(""))
    harness.tracker.track(GenericEvent("nowhere", services: [ServiceID("none")]))
    await harness.flush()
    #expect(
      lines.snapshot.filter { !$0.contains("session_start") && !$0.contains("tracker: dropped") } == [
        #"[CoreTracker] tracked kept (event) {"plan":"pro"}"#,
        #"[CoreTracker]   → firebase: kept {"plan":"pro"}"#,
        #"[CoreTracker]   → mixpanel: kept {"plan":"pro"}"#,
        #"[CoreTracker]   → collector: kept {"plan":"pro"}"#,
        "[CoreTracker] dropped sampled: sampled_out",
        "[CoreTracker] dropped : invalid_name",
        "[CoreTracker] tracked nowhere (event) {}",
        "[CoreTracker] dropped nowhere: no_service",
      ])
    // The drops again as the delivery reports an app sees (`tracker.deliveryReports()`).
    #expect(
      Set(lines.snapshot.filter { $0.contains("tracker: dropped") }) == [
        "[CoreTracker] tracker: dropped 1 (sampled_out)", "[CoreTracker] tracker: dropped 1 (invalid_name)",
        "[CoreTracker] tracker: dropped 1 (no_service)",
      ])
  }
}

@Suite("Sampling")
struct SamplingTests {
  private func event(_ name: String, seed: UInt64, anonymousID: String = "a") -> TrackedEvent {
    var ids = EventIDGenerator(seed: seed)
    return TrackedEvent(id: ids.next(at: Date()), name: name, timestamp: Date(), anonymousID: anonymousID)
  }

  @Test(arguments: [SamplingStage.Unit.event, .device])
  func decisionsAreDeterministic(unit: SamplingStage.Unit) {
    let stage = SamplingStage(rates: ["scroll": 0.3], unit: unit)
    for seed in 0..<500 as Range<UInt64> {
      let sample = event("scroll", seed: seed, anonymousID: "device-\(seed)")
      #expect(stage.keeps(sample) == stage.keeps(sample))
      #expect(stage.keeps(sample) == SamplingStage(rates: ["scroll": 0.3], unit: unit).keeps(sample))
    }
  }

  @Test(arguments: [0.1, 0.5, 0.9])
  func theKeptShareMatchesTheRate(rate: Double) {
    let stage = SamplingStage(rates: ["scroll": rate])
    let kept = (0..<20_000 as Range<UInt64>).filter { stage.keeps(event("scroll", seed: $0)) }.count
    #expect(abs(Double(kept) / 20_000 - rate) < 0.02)
  }

  @Test func aDeviceSendsAllOrNoneOfAnEvent() {
    let stage = SamplingStage(rates: ["scroll": 0.5], unit: .device)
    for device in 0..<200 {
      let decisions = Set(
        (0..<20 as Range<UInt64>).map { stage.keeps(event("scroll", seed: $0, anonymousID: "d\(device)")) })
      #expect(decisions.count == 1)
    }
  }

  @Test func ratesOnlyApplyToTheirNameAndClamp() {
    let stage = SamplingStage(rates: ["never": -1, "always": 7], defaultRate: 1)
    #expect(!stage.keeps(event("never", seed: 1)))
    #expect(stage.keeps(event("always", seed: 1)))
    #expect(stage.keeps(event("other", seed: 1)))
  }

  @Test func sampledOutEventsAreCountedByTheTracker() async {
    let harness = Harness { $0.sampling = SamplingStage(rates: ["scroll": 0.5]) }
    for _ in 0..<1000 { harness.tracker.track(GenericEvent("scroll")) }
    await harness.flush()
    let stats = harness.tracker.stats
    #expect(harness.collector.events.count + stats.dropped(.sampledOut) == 1000)
    #expect((400...600).contains(harness.collector.events.count))
  }
}
