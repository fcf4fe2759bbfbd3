public import CoreTracker
import Delivery
public import Foundation

extension Tracker {
  /// The first event in four lines, for an app with no product modules: a tracker that sends to a
  /// collector, with the production defaults of every other setting.
  ///
  /// ```swift
  /// import CollectorService
  /// import CoreTracker
  /// let tracker = try Tracker.start(collector: "http://127.0.0.1:8080", writeKey: "YOUR_WRITE_KEY", debug: true)
  /// tracker.track("signed_up", ["plan": "pro"])
  /// ```
  ///
  /// What it sets up: an anonymous id kept across launches, the crash journal (an event survives the
  /// process being killed once `track` returned) and the collector's durable outbox, all in
  /// `directory` (default: Application Support's `CoreTracker/<a hash of the collector and key>`),
  /// and the process's context (app, OS, device). With `debug` (a development build: pass `true`
  /// under `#if DEBUG`), each event is sent within a second and every step is written to standard
  /// error (``DebugLog``: tracked, handed to the collector, delivered, or refused with the server's
  /// reason — a wrong key is named); without it, events go in batches of 100 or every 30 seconds.
  ///
  /// - Throws: ``StartError/invalidCollectorURL(_:)`` for a URL that is not http(s), or the error of
  ///   a directory that cannot be made.
  public static func start(
    collector: String, writeKey: String, debug: Bool = false, directory: URL? = nil,
    configuration: TrackerConfiguration = TrackerConfiguration()
  ) throws -> Tracker {
    guard let endpoint = URL(string: collector), let scheme = endpoint.scheme?.lowercased(),
      scheme == "http" || scheme == "https", endpoint.host != nil
    else { throw StartError.invalidCollectorURL(collector) }
    let folder = directory ?? defaultDirectory(collector: collector, writeKey: writeKey)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var configuration = configuration
    configuration.anonymousID = try AnonymousID.loadOrCreate(in: folder)
    configuration.journal = configuration.journal ?? TrackerJournal(directory: folder.appendingPathComponent("journal"))
    if debug, configuration.debug == nil { configuration.debug = .standardError }
    let service = try CollectorService(
      endpoint: endpoint, writeKey: writeKey, directory: folder.appendingPathComponent("collector"),
      policy: debug ? FlushPolicy(count: 1, interval: 1) : FlushPolicy())
    return Tracker(services: [service], configuration: configuration)
  }

  /// Why ``start(collector:writeKey:debug:directory:configuration:)`` could not start.
  public enum StartError: Error, Equatable, CustomStringConvertible {
    /// The collector's address is not an http or https URL with a host.
    case invalidCollectorURL(String)

    public var description: String {
      switch self {
      case .invalidCollectorURL(let text): "\(text) is not an http(s) URL of a collector (http://127.0.0.1:8080)"
      }
    }
  }

  /// Application Support's `CoreTracker/<hash>`: one folder per collector and key, so that two
  /// set-ups never share an outbox.
  public static func defaultDirectory(collector: String, writeKey: String) -> URL {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in (collector + "\u{0}" + writeKey).utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    let base =
      FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
      ?? FileManager.default.temporaryDirectory
    return base.appendingPathComponent("CoreTracker").appendingPathComponent(String(hash, radix: 16))
  }
}
