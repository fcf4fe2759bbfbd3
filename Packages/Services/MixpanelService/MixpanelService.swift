public import CoreTracker
public import Delivery
public import Foundation
import MixpanelWire
/// Service identifiers and limit policies come with every service.
@_exported public import ServiceSupport

/// Sends events to Mixpanel's ingestion API: `/import?strict=1` (HTTP Basic auth with a service
/// account or the project token, gzip, ≤ 2000 events and ≤ 10 MB per request), or `/track` with the
/// project token inside each event (for tokens shipped in apps).
///
/// Each event gets `$insert_id` from its id (so a retry never double-counts), `time` in
/// milliseconds, `distinct_id` from the user (or the install's anonymous id), `$device_id`,
/// `$user_id` and Mixpanel's standard device properties (`$os`, `$app_version_string`, ...). In
/// strict mode Mixpanel stores the valid rows of a batch and lists the others in `failed_records`:
/// those are dropped with their reason, the rest counted delivered, and a 400 is never retried.
/// 429, 502 and 503 are retried with back-off from 2 s to 60 s plus jitter (honouring
/// `Retry-After`). Strings over 255 characters and events with 255 properties or more are handled
/// by the ``LimitPolicy`` and counted.
///
/// ```swift
/// let mixpanel = try MixpanelService(
///   mode: .projectToken("0123456789abcdef"),   // or .serviceAccount(username:secret:projectID:)
///   directory: applicationSupport.appendingPathComponent("tracking/mixpanel"),
///   host: MixpanelService.euHost
/// )
/// let tracker = TYTracker(services: [mixpanel])
/// ```
public final class MixpanelService: QueuedService {
  /// How the service authenticates and which endpoint it uses.
  public enum Mode: Sendable, Hashable {
    /// `/import` with the project token as the Basic-auth user name.
    case projectToken(String)
    /// `/import` with a service account (`project_id` in the URL).
    case serviceAccount(username: String, secret: String, projectID: String)
    /// `/track` with the token inside each event (last 5 days only; for tokens shipped in apps).
    case track(token: String)
  }

  /// Mixpanel's host.
  public static let defaultHost = URL(string: "https://api.mixpanel.com")!
  /// Mixpanel's EU host.
  public static let euHost = URL(string: "https://api-eu.mixpanel.com")!

  public let id: ServiceID
  /// The delivery queue underneath.
  public var queue: DeliveryQueue { delivery.queue }
  private let delivery: MappedDelivery<MixpanelMapper>

  /// Creates the service.
  ///
  /// - Parameters:
  ///   - mode: credentials and endpoint.
  ///   - directory: a directory the service's outbox owns.
  ///   - host: Mixpanel's host, ``euHost``, or a self-hosted collector that speaks `/import`.
  ///   - limits: what to do with an event that breaks a limit (default: repair and count).
  ///   - transport, retry, policy: delivery settings (back-off 2 s → 60 s by default).
  public init(
    id: ServiceID = .mixpanel,
    mode: Mode,
    directory: URL,
    host: URL = MixpanelService.defaultHost,
    limits: LimitPolicy = .repair,
    outbox: OutboxConfiguration = OutboxConfiguration(),
    transport: any HTTPTransport = URLSessionTransport(),
    retry: RetryPolicy = RetryPolicy(initialDelay: 2, maximumDelay: 60),
    policy: FlushPolicy = FlushPolicy()
  ) throws {
    self.id = id
    let format: MixpanelFormat
    func basic(_ user: String, _ password: String) -> String {
      "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
    var token: String?
    switch mode {
    case .projectToken(let projectToken):
      format = MixpanelFormat(
        url: Self.url(host, "import", [("strict", "1")]), authorization: basic(projectToken, ""), isTrack: false)
    case .serviceAccount(let username, let secret, let projectID):
      format = MixpanelFormat(
        url: Self.url(host, "import", [("strict", "1"), ("project_id", projectID)]),
        authorization: basic(username, secret), isTrack: false
      )
    case .track(let trackToken):
      token = trackToken
      format = MixpanelFormat(url: Self.url(host, "track", [("verbose", "1")]), authorization: nil, isTrack: true)
    }
    let queue = DeliveryQueue(
      outbox: try Outbox.openRun(in: directory, configuration: outbox).outbox, format: format, transport: transport,
      retry: retry, policy: policy
    )
    delivery = MappedDelivery(queue: queue, policy: limits, mapper: MixpanelMapper(policy: limits, token: token))
  }

  private static func url(_ host: URL, _ path: String, _ query: [(String, String)]) -> URL {
    var components = URLComponents(url: host.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
    components.queryItems = (components.queryItems ?? []) + query.map { URLQueryItem(name: $0.0, value: $0.1) }
    return components.url!
  }

  public func receive(_ event: TrackedEvent) { delivery.receive(event) }

  /// Delivery counts, drops by reason (`rejected_by_server` for `failed_records`, ...) and repairs.
  public func statistics() -> ServiceStats? { delivery.statistics() }
}
