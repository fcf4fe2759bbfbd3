public import CoreTracker
public import Delivery
public import Foundation
/// Service identifiers and limit policies come with every service.
@_exported public import ServiceSupport

/// The consent type of ``FirebaseService/init(id:firebaseAppID:apiSecret:directory:host:endpoint:limits:appInstanceID:consent:outbox:transport:retry:policy:)``.
@_exported public import struct GA4Wire.GA4Consent

/// Sends events to Google Analytics 4 for a Firebase app stream over the Measurement Protocol
/// (`POST /mp/collect?firebase_app_id=…&api_secret=…`), where the Firebase SDK does not exist
/// (Linux, servers, tools) or is not wanted.
///
/// GA4 answers 2xx and silently drops what breaks its rules, so every documented limit is enforced
/// here before sending (names of 40 characters of letters, digits and `_` starting with a letter,
/// reserved names and prefixes, ≤ 25 parameters, values ≤ 100 characters, user properties ≤ 24/36
/// characters and ≤ 25, User-ID ≤ 256), with a ``LimitPolicy``: repair, drop, or strict (each
/// violation reported as a typed `GA4Violation`). Every case is counted by reason in
/// ``statistics()``. Requests carry ≤ 25 events and stay under 130 kB; events older than 72 hours
/// are dropped as `expired` instead of sent. Each event carries `session_id` and a positive
/// `engagement_time_msec` from the tracker's session, so sessions and real-time views work. A
/// screen view in the uniform shape becomes `screen_view` with `screen_name` (the event's name) and
/// `screen_class` (its `screen_class` parameter, or the name); a feature's own Firebase payload
/// (`view_item`, say) is sent as it is.
///
/// ```swift
/// let firebase = try FirebaseService(
///   firebaseAppID: "1:1234567890:ios:abcdef",
///   apiSecret: "…",                                  // Admin › Data streams › Measurement Protocol
///   directory: applicationSupport.appendingPathComponent("tracking/firebase"),
///   host: FirebaseService.euHost,                    // or your own collector
///   limits: .strict { error in assertionFailure("\(error)") }  // development
/// )
/// let tracker = DLTracker(services: [firebase])
/// ```
public final class FirebaseService: QueuedService {
  /// Where requests go.
  public enum Endpoint: Sendable, Hashable {
    /// `/mp/collect`: events are recorded.
    case collect
    /// `/debug/mp/collect`: nothing is recorded; the answer's `validationMessages` drop the events
    /// they name and are reported as `GA4Violation`s in strict mode.
    case validation
  }

  /// Google's host.
  public static let defaultHost = URL(string: "https://www.google-analytics.com")!
  /// Google's EU host (data collected in the EU).
  public static let euHost = URL(string: "https://region1.google-analytics.com")!

  public let id: ServiceID
  /// The delivery queue underneath.
  public var queue: DeliveryQueue { delivery.queue }
  private let delivery: MappedDelivery<GA4Mapper>

  /// Creates the service.
  ///
  /// - Parameters:
  ///   - firebaseAppID: the Firebase app id of the stream (`firebase_app_id`).
  ///   - apiSecret: a Measurement Protocol API secret of the stream (`api_secret`).
  ///   - directory: a directory the service's outbox owns.
  ///   - host: Google's host, ``euHost``, or a self-hosted collector that speaks `/mp/collect`.
  ///   - endpoint: ``Endpoint/collect``, or ``Endpoint/validation`` while developing.
  ///   - limits: what to do with an event that breaks a limit (default: repair and count).
  ///   - appInstanceID: the `app_instance_id` of an event; `nil` (the default): the install's
  ///     anonymous id without dashes, lower-cased (32 hex digits for a UUID, as Firebase's own ids).
  ///   - consent: the user's advertising consent, sent as each request's `consent` (and, when
  ///     personalisation is denied, the legacy `non_personalized_ads: true`); read on the service's
  ///     queue as each event is handed over, so what the user chose then goes with the event.
  ///     `nil` (the default): no consent is sent and Google applies the property's defaults.
  ///   - transport, retry, policy: delivery settings (events are kept at most 72 hours).
  public init(
    id: ServiceID = .firebase,
    firebaseAppID: String,
    apiSecret: String,
    directory: URL,
    host: URL = FirebaseService.defaultHost,
    endpoint: Endpoint = .collect,
    limits: LimitPolicy = .repair,
    appInstanceID: (@Sendable (TrackedEvent) -> String)? = nil,
    consent: (@Sendable () -> GA4Consent?)? = nil,
    outbox: OutboxConfiguration = OutboxConfiguration(),
    transport: any HTTPTransport = URLSessionTransport(),
    retry: RetryPolicy = RetryPolicy(maximumEventAge: 72 * 3_600),
    policy: FlushPolicy = FlushPolicy()
  ) throws {
    self.id = id
    var components = URLComponents(
      url: host.appendingPathComponent(endpoint == .collect ? "mp/collect" : "debug/mp/collect"),
      resolvingAgainstBaseURL: false
    )!
    components.queryItems =
      (components.queryItems ?? []) + [
        URLQueryItem(name: "firebase_app_id", value: firebaseAppID), URLQueryItem(name: "api_secret", value: apiSecret),
      ]
    var report: (@Sendable (any Error) -> Void)?
    if case .strict(let handler) = limits { report = handler }
    var retry = retry
    retry.maximumEventAge = min(retry.maximumEventAge, 72 * 3_600)
    let queue = DeliveryQueue(
      outbox: try Outbox.openRun(in: directory, configuration: outbox).outbox,
      format: GA4Format(url: components.url!, report: report),
      transport: transport, retry: retry, policy: policy
    )
    delivery = MappedDelivery(
      queue: queue, policy: limits, mapper: GA4Mapper(policy: limits, appInstanceID: appInstanceID, consent: consent))
  }

  /// The anonymous id without dashes, lower-cased.
  public static let defaultAppInstanceID: @Sendable (TrackedEvent) -> String = {
    $0.anonymousID.replacingOccurrences(of: "-", with: "").lowercased()
  }

  public func receive(_ event: TrackedEvent) { delivery.receive(event) }

  /// Delivery counts, drops by reason (`ga4_name_invalid`, `expired`, ...) and repairs by reason.
  public func statistics() -> ServiceStats? { delivery.statistics() }
}
