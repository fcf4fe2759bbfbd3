public import CoreTracker

/// The identifier of every service this package ships, declared once: each service answers to its
/// own here, and product trackers re-publish these same values (`TYService.firebase` is
/// `ServiceID.firebase`), so renaming one cannot silently switch a feature's payloads off.
extension ServiceID {
  /// The system log (`LogService`).
  public static let log = ServiceID("log")
  /// The in-house collector (`CollectorService`).
  public static let collector = ServiceID("collector")
  /// Google Analytics 4 / Firebase (`FirebaseService`).
  public static let firebase = ServiceID("firebase")
  /// Mixpanel (`MixpanelService`).
  public static let mixpanel = ServiceID("mixpanel")
  /// A SimpleAnalytics-compatible endpoint (`SimpleAnalyticsService`).
  public static let simpleAnalytics = ServiceID("simple_analytics")
}
