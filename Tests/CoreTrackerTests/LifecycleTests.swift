import CoreTracker
import CoreTrackerTesting
import Foundation
import Testing

/// A service that counts `sendSoon` calls beside recording events.
final class SendSoonService: TrackerService, @unchecked Sendable {
  // @unchecked: the counts are behind their lock.
  let id = ServiceID.collector
  private let state = Locked<(events: [TrackedEvent], sendSoon: Int)>(([], 0))
  func receive(_ event: TrackedEvent) { state.withLock { $0.events.append(event) } }
  func sendSoon() { state.withLock { $0.sendSoon += 1 } }
  var events: [TrackedEvent] { state.snapshot.events }
  var names: [String] { events.map(\.name) }
  var sendSoonCount: Int { state.snapshot.sendSoon }
}

/// One run of an app: a tracker with lifecycle tracking over a manual source.
struct AppRun {
  let lifecycle = ManualLifecycleSource()
  let service = SendSoonService()
  let tracker: Tracker

  init(directory: URL, version: String, build: String = "1", sessionEvents: Bool = false, tracksEvents: Bool = true) {
    tracker = Tracker(
      services: [service],
      configuration: TrackerConfiguration(
        context: TrackingContext(appName: "Shop", appVersion: version, appBuild: build, platform: "iOS"),
        anonymousID: "anon-1", emitsSessionEvents: sessionEvents,
        lifecycle: AppLifecycle(source: lifecycle, directory: directory, tracksEvents: tracksEvents)))
  }

  func finish() async -> [TrackedEvent] {
    await tracker.flush()
    return service.events
  }
}

@Suite("App lifecycle")
struct LifecycleTests {
  @Test func anInstallThenASameVersionRunThenAnUpdate() async throws {
    let folder = JournalFolder()
    let first = await AppRun(directory: folder.url, version: "1.0", build: "100").finish()
    let second = await AppRun(directory: folder.url, version: "1.0", build: "100").finish()
    let third = await AppRun(directory: folder.url, version: "1.1", build: "104").finish()

    #expect(first.map(\.name) == ["application_installed", "application_opened"])
    #expect(first[0].parameters.pairs.map(\.key) == ["version", "build"])
    #expect(first[1].parameters["from_background"] == false)
    #expect(second.map(\.name) == ["application_opened"])
    #expect(third.map(\.name) == ["application_updated", "application_opened"])
    #expect(
      third[0].parameters
        == ["previous_version": "1.0", "previous_build": "100", "version": "1.1", "build": "104"])
  }

  @Test func aNewBuildOfTheSameVersionIsAnUpdate() async {
    let folder = JournalFolder()
    _ = await AppRun(directory: folder.url, version: "2.0", build: "7").finish()
    let next = await AppRun(directory: folder.url, version: "2.0", build: "8").finish()
    #expect(next.first?.name == "application_updated")
  }

  @Test func backgroundForegroundAndTerminate() async {
    let folder = JournalFolder()
    let run = AppRun(directory: folder.url, version: "1.0", sessionEvents: true)
    run.tracker.track(GenericEvent("browse"))
    run.lifecycle.send(.enteredBackground)
    run.lifecycle.send(.enteredForeground)
    run.lifecycle.send(.willTerminate)
    let events = await run.finish()

    #expect(
      events.map(\.name) == [
        "session_start", "application_installed", "application_opened", "browse", "application_backgrounded",
        "application_opened", "session_end",
      ])
    #expect(events[5].parameters["from_background"] == true)
    #expect(run.service.sendSoonCount == 2)  // on background and on terminate
  }

  @Test func withTheEventsOffTheAppStillSendsOnBackground() async {
    let folder = JournalFolder()
    let run = AppRun(directory: folder.url, version: "1.0", tracksEvents: false)
    run.tracker.track(GenericEvent("browse"))
    run.lifecycle.send(.enteredBackground)
    let events = await run.finish()
    #expect(events.map(\.name) == ["browse"])
    #expect(run.service.sendSoonCount == 1)
  }

  @Test func aReleasedTrackerStopsListening() async {
    let folder = JournalFolder()
    let lifecycle: ManualLifecycleSource
    do {
      let run = AppRun(directory: folder.url, version: "1.0")
      _ = await run.finish()
      lifecycle = run.lifecycle
    }
    lifecycle.send(.enteredBackground)  // nobody listens: nothing happens, nothing crashes
  }

  @Test(arguments: ["", "1.0", String(repeating: "9", count: 5000)])
  func anUnreadableVersionFileCountsAsAnInstall(contents: String) async throws {
    let folder = JournalFolder()
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    try Data(contents.utf8).write(to: folder.url.appendingPathComponent("app-version"))
    let events = await AppRun(directory: folder.url, version: "1.0").finish()
    #expect(events.map(\.name) == ["application_installed", "application_opened"])
  }

  @Test func aVersionThatCannotBeStoredIsReportedAndTheEventsStillGo() async throws {
    let folder = JournalFolder()
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    let notAFolder = folder.url.appendingPathComponent("file")
    try Data("x".utf8).write(to: notAFolder)
    let run = AppRun(directory: notAFolder, version: "1.0")
    let events = await run.finish()
    #expect(events.map(\.name) == ["application_installed", "application_opened"])
    #expect(run.tracker.stats.lifecycleError != nil)
  }
}

@Suite("Platform lifecycle source")
struct PlatformLifecycleSourceTests {
  /// Each observed notification reaches the handler as its transition, until the source stops.
  @Test func anObservedNotificationReachesTheHandlerUntilStopped() {
    let names: [(name: String, transition: LifecycleTransition)] = [
      ("CoreTrackerTestBackground-\(UUID())", .enteredBackground),
      ("CoreTrackerTestForeground-\(UUID())", .enteredForeground),
      ("CoreTrackerTestTerminate-\(UUID())", .willTerminate),
    ]
    let received = Locked<[LifecycleTransition]>([])
    let source = PlatformLifecycleSource(notifications: names)
    source.start { transition in received.withLock { $0.append(transition) } }
    for (name, _) in names { NotificationCenter.default.post(name: Notification.Name(name), object: nil) }
    #expect(received.snapshot == [.enteredBackground, .enteredForeground, .willTerminate])
    source.stop()
    NotificationCenter.default.post(name: Notification.Name(names[0].name), object: nil)
    #expect(received.snapshot.count == 3)
  }
}
