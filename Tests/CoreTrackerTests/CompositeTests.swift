import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

@Suite("Composites")
struct CompositeTests {
  private func envelope(_ name: String, _ parameters: EventParameters = [:]) -> TrackedEvent {
    var ids = EventIDGenerator(seed: 3)
    return TrackedEvent(id: ids.next(at: Date()), name: name, parameters: parameters, timestamp: Date())
  }

  @Test func multiplexFansOutToEveryServiceAndFlushesAll() async {
    let a = RecordingService(id: ServiceID("a"))
    let b = RecordingService(id: ServiceID("b"))
    let both = MultiplexService(id: ServiceID("both"), services: [a, b])
    both.receive(envelope("x"))
    await both.flush()
    #expect(a.names == ["x"] && b.names == ["x"])
    #expect(a.flushCount == 1 && b.flushCount == 1)
    #expect(both.statistics()?.delivered == 2)
  }

  @Test func noOpDiscards() {
    let service = NoOpService()
    service.receive(envelope("x"))
    #expect(service.statistics() == nil)
    #expect(service.id == ServiceID("noop"))
  }

  @Test func sharedTrackerBootstrapReplacesTheDefault() {
    let holder = SharedTracker<any CoreTracker> { NoOpTracker() }
    #expect(holder.value is NoOpTracker)
    let recording = RecordingTracker()
    holder.bootstrap(recording)
    #expect(holder.value as? RecordingTracker === recording)
  }

  @Test func anonymousIDPersistsInItsDirectory() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anon-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let first = try AnonymousID.loadOrCreate(in: directory)
    let second = try AnonymousID.loadOrCreate(in: directory)
    #expect(first == second)
    #expect(!first.isEmpty)
  }

  @Test func currentContextIsFilledIn() {
    let context = TrackingContext.current()
    #expect(!context.appName.isEmpty)
    #expect(!context.osVersion.isEmpty)
    #expect(!context.platform.isEmpty)
    #expect(!context.timeZone.isEmpty)
    #expect(context.libraryVersion == TrackingContext.libraryVersion)
  }
}
