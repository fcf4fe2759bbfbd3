public import Foundation

/// App lifecycle tracking, switched on with ``TrackerConfiguration/lifecycle``.
///
/// With it, a ``Tracker``:
/// - at start, tracks ``LifecycleEvent/installed`` the first time it runs in an install, or
///   ``LifecycleEvent/updated`` when the app's version or build differs from the last run's (kept
///   in the file `app-version` in ``directory``), then ``LifecycleEvent/opened`` (cold);
/// - on ``LifecycleTransition/enteredBackground``, tracks ``LifecycleEvent/backgrounded`` and asks
///   every service to send what waits (``Tracker/sendSoon()``);
/// - on ``LifecycleTransition/enteredForeground``, tracks ``LifecycleEvent/opened`` (from the
///   background);
/// - on ``LifecycleTransition/willTerminate``, ends the session and asks the services to send.
///
/// ```swift
/// let tracker = Tracker(services: services, configuration: TrackerConfiguration(
///   lifecycle: AppLifecycle(source: PlatformLifecycleSource(), directory: storage)))
/// ```
///
/// The version is the tracker's ``TrackingContext/appVersion`` and ``TrackingContext/appBuild``.
/// The first run with lifecycle tracking on counts as an install, as in Segment's and PostHog's
/// SDKs. Sending on background and ending the session on terminate happen even with
/// ``tracksEvents`` off.
public struct AppLifecycle: Sendable {
  /// What reports the app's transitions.
  public var source: any LifecycleSource
  /// Where the last run's version and build are kept (created if needed).
  public var directory: URL
  /// Whether the `application_*` events are tracked. Default `true`.
  public var tracksEvents: Bool

  /// Creates a lifecycle configuration.
  public init(source: any LifecycleSource, directory: URL, tracksEvents: Bool = true) {
    self.source = source
    self.directory = directory
    self.tracksEvents = tracksEvents
  }
}

/// The events lifecycle tracking emits (names in the uniform serialisation).
public enum LifecycleEvent: CoreTrackable, Hashable {
  /// The first run of the app in this install: `version`, `build`.
  case installed(version: String, build: String)
  /// The first run after the version or build changed: `previous_version`, `previous_build`,
  /// `version`, `build`.
  case updated(previousVersion: String, previousBuild: String, version: String, build: String)
  /// The app was opened: cold (`from_background` false) or back from the background.
  case opened(fromBackground: Bool, version: String, build: String)
  /// The app went to the background.
  case backgrounded

  public var name: String {
    switch self {
    case .installed: "application_installed"
    case .updated: "application_updated"
    case .opened: "application_opened"
    case .backgrounded: "application_backgrounded"
    }
  }

  public var parameters: EventParameters {
    switch self {
    case .installed(let version, let build):
      ["version": .string(version), "build": .string(build)]
    case .updated(let previousVersion, let previousBuild, let version, let build):
      [
        "previous_version": .string(previousVersion), "previous_build": .string(previousBuild),
        "version": .string(version), "build": .string(build),
      ]
    case .opened(let fromBackground, let version, let build):
      ["from_background": .bool(fromBackground), "version": .string(version), "build": .string(build)]
    case .backgrounded:
      [:]
    }
  }
}

/// The last run's version and build, in `app-version` (two lines), read and written at start.
struct AppVersionStore {
  let file: URL

  init(directory: URL) { file = directory.appendingPathComponent("app-version") }

  /// The stored version and build; `nil` when there is none or it is not two short lines.
  func load() -> (version: String, build: String)? {
    guard let data = try? Data(contentsOf: file), data.count <= 1024 else { return nil }
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.count >= 2 else { return nil }
    return (String(lines[0]), String(lines[1]))
  }

  func save(version: String, build: String) throws {
    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data((version + "\n" + build + "\n").utf8).write(to: file, options: .atomic)
  }

  /// The event this run starts with (installed or updated; `nil` when the version and build are
  /// the last run's), after storing the current version, and why that failed if it did.
  func transition(to version: String, build: String) -> (event: LifecycleEvent?, failure: String?) {
    let previous = load()
    if let previous, previous.version == version, previous.build == build { return (nil, nil) }
    var failure: String?
    do {
      try save(version: version, build: build)
    } catch {
      failure = "storing the app version in \(file.path): \(error.localizedDescription)"
    }
    guard let previous else { return (.installed(version: version, build: build), failure) }
    let event = LifecycleEvent.updated(
      previousVersion: previous.version, previousBuild: previous.build, version: version, build: build)
    return (event, failure)
  }
}

extension Tracker {
  /// Starts lifecycle tracking: the start events, then the source's transitions.
  /// Returns why the version could not be stored, if it could not.
  func startLifecycle(_ lifecycle: AppLifecycle, context: TrackingContext) -> String? {
    var failure: String?
    if lifecycle.tracksEvents {
      let start = AppVersionStore(directory: lifecycle.directory)
        .transition(to: context.appVersion, build: context.appBuild)
      if let event = start.event { track(event) }
      failure = start.failure
      track(LifecycleEvent.opened(fromBackground: false, version: context.appVersion, build: context.appBuild))
    }
    let tracksEvents = lifecycle.tracksEvents
    lifecycle.source.start { [weak self] transition in
      self?.handle(transition, tracksEvents: tracksEvents, context: context)
    }
    return failure
  }

  private func handle(_ transition: LifecycleTransition, tracksEvents: Bool, context: TrackingContext) {
    switch transition {
    case .enteredBackground:
      if tracksEvents { track(LifecycleEvent.backgrounded) }
      sendSoon()
    case .enteredForeground:
      if tracksEvents {
        track(LifecycleEvent.opened(fromBackground: true, version: context.appVersion, build: context.appBuild))
      }
    case .willTerminate:
      endSession()
      sendSoon()
    }
  }
}
