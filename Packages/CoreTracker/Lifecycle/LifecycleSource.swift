import Foundation

/// A moment in the app's life a ``LifecycleSource`` reports.
public enum LifecycleTransition: Sendable, Hashable {
  /// The app came back to the foreground.
  case enteredForeground
  /// The app went to the background (or, on macOS, stopped being the active app).
  case enteredBackground
  /// The app is about to terminate.
  case willTerminate
}

/// Tells a ``Tracker`` what the app goes through: the platform's notifications on Apple platforms
/// (``PlatformLifecycleSource``), or a program's own calls (``ManualLifecycleSource``) in
/// command-line and server programs and tests.
///
/// A source calls its handler on whatever thread the transition happens on; the tracker only
/// queues work there, so a source never needs the main queue.
public protocol LifecycleSource: AnyObject, Sendable {
  /// Starts reporting transitions to `handler`, until ``stop()``.
  func start(_ handler: @escaping @Sendable (LifecycleTransition) -> Void)
  /// Stops reporting.
  func stop()
}

/// A lifecycle source driven by hand: `send(.enteredBackground)` where the program knows it.
///
/// ```swift
/// let lifecycle = ManualLifecycleSource()
/// let tracker = Tracker(services: services, configuration: TrackerConfiguration(
///   lifecycle: AppLifecycle(source: lifecycle, directory: storage)))
/// // … on SIGTERM, or at the end of main:
/// lifecycle.send(.willTerminate)
/// await tracker.flush()
/// ```
public final class ManualLifecycleSource: LifecycleSource {
  private let handler = Locked<(@Sendable (LifecycleTransition) -> Void)?>(nil)

  /// Creates a source that reports only what ``send(_:)`` is given.
  public init() {}

  public func start(_ handler: @escaping @Sendable (LifecycleTransition) -> Void) {
    self.handler.withLock { $0 = handler }
  }

  public func stop() { handler.withLock { $0 = nil } }

  /// Reports `transition` to the tracker, if it has started this source.
  public func send(_ transition: LifecycleTransition) {
    handler.snapshot?(transition)
  }
}

/// The platform's own lifecycle notifications: UIKit's (iOS, iPadOS, tvOS, visionOS, Mac Catalyst),
/// AppKit's (macOS: resigning and becoming active) or WatchKit's. Elsewhere (Linux) it reports
/// nothing: use ``ManualLifecycleSource``.
///
/// Observes `NotificationCenter.default` with no queue, so the tracker hears each transition on the
/// thread that posts it (the main thread, for these) and only queues work there. The notifications
/// are named by their documented string values rather than the UI frameworks' constants, which are
/// main-actor isolated in recent SDKs: the library imports no UI framework.
public final class PlatformLifecycleSource: LifecycleSource {
  private let observers = Locked<[any NSObjectProtocol]>([])
  private let notifications: [(name: String, transition: LifecycleTransition)]

  /// Creates a source over the platform's notifications.
  public convenience init() { self.init(notifications: Self.platformNotifications) }

  /// Creates a source over the notifications named (tests post their own).
  package init(notifications: [(name: String, transition: LifecycleTransition)]) {
    self.notifications = notifications
  }

  /// The notifications observed on this platform and what each one means.
  package static var platformNotifications: [(name: String, transition: LifecycleTransition)] {
    #if os(iOS) || os(tvOS) || os(visionOS) || targetEnvironment(macCatalyst)
      [
        ("UIApplicationDidEnterBackgroundNotification", .enteredBackground),
        ("UIApplicationWillEnterForegroundNotification", .enteredForeground),
        ("UIApplicationWillTerminateNotification", .willTerminate),
      ]
    #elseif os(macOS)
      [
        ("NSApplicationDidResignActiveNotification", .enteredBackground),
        ("NSApplicationDidBecomeActiveNotification", .enteredForeground),
        ("NSApplicationWillTerminateNotification", .willTerminate),
      ]
    #elseif os(watchOS)
      [
        ("WKApplicationDidEnterBackgroundNotification", .enteredBackground),
        ("WKApplicationWillEnterForegroundNotification", .enteredForeground),
      ]
    #else
      []
    #endif
  }

  public func start(_ handler: @escaping @Sendable (LifecycleTransition) -> Void) {
    let center = NotificationCenter.default
    let added = notifications.map { name, transition in
      center.addObserver(forName: Notification.Name(name), object: nil, queue: nil) { _ in handler(transition) }
    }
    observers.withLock { $0 += added }
  }

  public func stop() {
    let removed = observers.withLock { observers in
      defer { observers = [] }
      return observers
    }
    for observer in removed { NotificationCenter.default.removeObserver(observer) }
  }

  deinit { stop() }
}
