@_exported public import CoreTracker
public import LogService
import ServiceSupport

/// The services Trendyol routes events to, by identifier: what Trendyol features name in an event's
/// `services` and `payload(for:)`, without importing any service module.
public enum TYService {
  /// The system log.
  public static let log = ServiceID.log
  /// The in-house collector.
  public static let collector = ServiceID.collector
  /// Google Analytics 4 / Firebase.
  public static let firebase = ServiceID.firebase
  /// Mixpanel.
  public static let mixpanel = ServiceID.mixpanel
}

/// Trendyol's tracker: the only tracking module Trendyol features import.
///
/// It re-exports the tracking vocabulary (``CoreTrackable``, ``EventParameters``, ...), injects
/// Trendyol's service implementations as defaulted `init` parameters and adds Trendyol's default
/// parameters (``defaultParameters``) to every event each service receives.
///
/// Presenters default to ``shared``; the app replaces it once at start-up with ``bootstrap(_:)``:
///
/// ```swift
/// TYTracker.bootstrap(TYTracker(log: LogService(label: "com.trendyol.app")))
/// let presenter = ProductDetailPresenter(product: product)  // tracks through TYTracker.shared
/// ```
public final class TYTracker: ForwardingTracker {
  /// The parameters Trendyol adds to every event, through every service.
  public static let defaultParameters: EventParameters = ["product": "trendyol", "business_unit": "marketplace"]

  private static let holder = SharedTracker<any CoreTracker> { TYTracker() }

  /// The tracker presenters use when none is passed: a `TYTracker` with its default services
  /// unless ``bootstrap(_:)`` replaced it.
  public static var shared: any CoreTracker { holder.value }

  /// Replaces ``shared``; call once at start-up, before any presenter is made.
  public static func bootstrap(_ tracker: any CoreTracker) { holder.bootstrap(tracker) }

  /// The engine every call is forwarded to (its ``Tracker/stats`` show what happened to events).
  public let base: Tracker

  /// Creates Trendyol's tracker.
  ///
  /// - Parameters:
  ///   - log: the system-log service (shared type, Trendyol's label).
  ///   - collector: the in-house collector (a `CollectorService` with ``TYService/collector`` as its id),
  ///     which receives the product's defaults like every other service (they are added before
  ///     validation and privacy scrubbing, as the configuration's own defaults are).
  ///   - services: further services (vendors, SimpleAnalytics), each with its own ``TrackerService/id``;
  ///     use the identifiers in ``TYService`` so Trendyol events' per-service shapes reach them.
  ///   - configuration: enrichment, session, consent and pipeline settings. In the development
  ///     environment every event is also checked against ``TYPlan/plan`` (``PlanCheckStage``), each
  ///     violation said through the configuration's `warning`.
  public init(
    log: any TrackerService = LogService(label: "com.trendyol.tracking"),
    collector: (any TrackerService)? = nil,
    services: [any TrackerService] = [],
    configuration: TrackerConfiguration = TrackerConfiguration()
  ) {
    let configuration = configuration.forProduct(defaults: Self.defaultParameters, plan: TYPlan.plan)
    base = Tracker(services: [log] + [collector].compactMap { $0 } + services, configuration: configuration)
  }
}
