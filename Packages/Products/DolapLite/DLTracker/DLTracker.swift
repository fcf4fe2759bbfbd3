@_exported public import CoreTracker
public import LogService
import ServiceSupport

/// The services Dolap Lite routes events to, by identifier: what Dolap Lite features name in an
/// event's `services` and `payload(for:)`, without importing any service module.
public enum DLService {
  /// The system log.
  public static let log = ServiceID.log
  /// The in-house collector.
  public static let collector = ServiceID.collector
  /// Google Analytics 4 / Firebase.
  public static let firebase = ServiceID.firebase
  /// Mixpanel.
  public static let mixpanel = ServiceID.mixpanel
}

/// Dolap Lite's tracker: the only tracking module Dolap Lite features import.
///
/// The same shared service types as Trendyol, with Dolap Lite's defaults (``defaultParameters``)
/// added to every event each service receives.
///
/// ```swift
/// DLTracker.bootstrap(DLTracker(log: LogService(label: "com.dolap.lite")))
/// let presenter = ListingDetailPresenter(listing: listing)  // tracks through DLTracker.shared
/// ```
public final class DLTracker: ForwardingTracker {
  /// The parameters Dolap Lite adds to every event, through every service.
  public static let defaultParameters: EventParameters = [
    "product": "dolap_lite", "business_unit": "second_hand", "host_app": "trendyol",
  ]

  private static let holder = SharedTracker<any CoreTracker> { DLTracker() }

  /// The tracker presenters use when none is passed: a `DLTracker` with its default services
  /// unless ``bootstrap(_:)`` replaced it.
  public static var shared: any CoreTracker { holder.value }

  /// Replaces ``shared``; call once at start-up, before any presenter is made.
  public static func bootstrap(_ tracker: any CoreTracker) { holder.bootstrap(tracker) }

  /// The engine every call is forwarded to (its ``Tracker/stats`` show what happened to events).
  public let base: Tracker

  /// Creates Dolap Lite's tracker.
  ///
  /// - Parameters:
  ///   - log: the system-log service (shared type, Dolap Lite's label).
  ///   - collector: the in-house collector (a `CollectorService` with ``DLService/collector`` as its id),
  ///     which receives the product's defaults like every other service (they are added before
  ///     validation and privacy scrubbing, as the configuration's own defaults are).
  ///   - services: further services (vendors, SimpleAnalytics), each with its own ``TrackerService/id``;
  ///     use the identifiers in ``DLService``.
  ///   - configuration: enrichment, session, consent and pipeline settings. Dolap Lite treats
  ///     `phone` as personal data in every event unless the configuration says otherwise.
  public init(
    log: any TrackerService = LogService(label: "com.dolap.lite.tracking"),
    collector: (any TrackerService)? = nil,
    services: [any TrackerService] = [],
    configuration: TrackerConfiguration = TrackerConfiguration(privacy: PrivacyStage(personalKeys: ["phone"]))
  ) {
    let configuration = configuration.forProduct(defaults: Self.defaultParameters, plan: DLPlan.plan)
    base = Tracker(services: [log] + [collector].compactMap { $0 } + services, configuration: configuration)
  }
}
