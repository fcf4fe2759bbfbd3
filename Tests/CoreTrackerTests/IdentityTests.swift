import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

@Suite("Identity: identify and reset")
struct IdentityTests {
  @Test func anAnonymousPrefixThenSignInThenSignOut() async throws {
    let harness = Harness(sessionEvents: true)
    harness.tracker.track(GenericEvent("browse"))
    harness.tracker.identify(userID: "u-1")
    harness.tracker.setUserProperty("gold", forKey: "tier")
    harness.tracker.track(GenericEvent("buy"))
    harness.tracker.startTimer(for: "checkout_completed")
    harness.tracker.reset(anonymousID: "anon-2")
    harness.tracker.track(GenericEvent("browse"))
    await harness.flush()

    let events = harness.collector.events
    #expect(events.map(\.name) == ["session_start", "browse", "buy", "session_end", "session_start", "browse"])
    #expect(events.map(\.anonymousID) == ["anon-1", "anon-1", "anon-1", "anon-1", "anon-2", "anon-2"])
    #expect(events.map(\.userID) == [nil, nil, "u-1", "u-1", nil, nil])
    #expect(events[2].userProperties["tier"] == "gold")
    #expect(events[5].userProperties.isEmpty)
    #expect(events[4].session?.number == 2)
  }

  @Test func aResetEndsTimers() async {
    let harness = Harness()
    harness.tracker.track(GenericEvent("browse"))
    harness.tracker.startTimer(for: "checkout_completed")
    harness.tracker.reset()
    harness.tracker.track(GenericEvent("checkout_completed"))
    await harness.flush()
    #expect(harness.collector.events.last?.parameters["duration_ms"] == nil)
    #expect(harness.collector.events.last?.anonymousID != "anon-1")
  }

  @Test func aReplacedStoredIdentifierIsTheOneTheNextLaunchLoads() throws {
    let folder = JournalFolder()
    let first = try AnonymousID.loadOrCreate(in: folder.url)
    let replaced = try AnonymousID.replace(in: folder.url)
    #expect(replaced != first)
    #expect(try AnonymousID.loadOrCreate(in: folder.url) == replaced)
  }

  @Test func aSignOutBeforeACrashIsReplayed() async throws {
    let folder = JournalFolder()
    let clock = ManualClock()
    let first = HeldRun(journal: folder.folder("a"), clock: clock)
    first.tracker.identify(userID: "u-1")
    first.tracker.track(GenericEvent("b"))
    first.tracker.reset(anonymousID: "anon-after")
    first.tracker.track(GenericEvent("c"))
    _ = try copyJournal(from: folder.folder("a"), to: folder.folder("b"))
    let replay = RecordingService(id: .collector)
    let second = Tracker(services: [replay], configuration: journalingConfiguration(folder.folder("b"), clock: clock))
    await second.flush()
    await first.finish()
    #expect(replay.events.map(\.name) == ["a", "b", "c"])
    #expect(replay.events.map(\.userID) == [nil, "u-1", nil])
    #expect(replay.events.map(\.anonymousID) == ["anon-1", "anon-1", "anon-after"])
  }

  @Test func aRecordingTrackerRecordsResets() {
    let tracker = RecordingTracker()
    tracker.identify(userID: "u-1")
    tracker.reset(anonymousID: "anon-2")
    #expect(tracker.userID == nil)
    #expect(tracker.resets == ["anon-2"])
  }
}
