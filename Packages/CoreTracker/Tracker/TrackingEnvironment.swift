public import Foundation

/// Which build an event comes from — `development`, `internal` (TestFlight, staging) or
/// `production` — so that test traffic never mixes with real users'.
///
/// Every event carries its environment (the context's ``TrackingContext/environment``); the
/// collector keeps each environment's data apart and reports production unless asked for another.
/// Pick it from the build with ``detect(debug:receiptURL:override:)``, or name it:
///
/// ```swift
/// let environment = TrackingEnvironment.detect()
/// let collector = PerEnvironment(production: prodURL, development: devURL)[environment]
/// let tracker = Tracker(services: [...], configuration: TrackerConfiguration(environment: environment))
/// ```
///
/// A name is 1 to 32 lowercase letters, digits, `-` or `_`; the collector quarantines a batch whose
/// environment is not one, naming `context.environment`.
public struct TrackingEnvironment: Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
  /// The environment's name.
  public var name: String

  /// An environment named `name`.
  public init(_ name: String) { self.name = name }

  public init(stringLiteral name: String) { self.name = name }

  public var description: String { name }

  /// Developers' builds (a debug build).
  public static let development = TrackingEnvironment("development")
  /// Internal and beta builds (TestFlight, staging).
  public static let `internal` = TrackingEnvironment("internal")
  /// The store build: real users. Events that name no environment count as this.
  public static let production = TrackingEnvironment("production")

  /// The process environment variable that overrides what ``detect(debug:receiptURL:override:)``
  /// finds (set it in a scheme to send a release build's events to `internal`, say).
  public static let overrideVariable = "CORETRACKER_ENVIRONMENT"

  /// The environment of this build: `override` when it names one (by default the
  /// ``overrideVariable`` process environment variable), else ``development`` in a debug build,
  /// ``internal`` when the App Store receipt is a sandbox one (TestFlight), else ``production``.
  ///
  /// `debug` defaults to whether the code was compiled without optimisation, as a debug build of
  /// an app compiles it and its packages; to tie it to the app's own `DEBUG` flag instead, pass
  /// the flag (`#if DEBUG` … `detect(debug: true)`).
  public static func detect(
    debug: Bool = _isDebugAssertConfiguration(),
    receiptURL: URL? = TrackingEnvironment.appStoreReceiptURL,
    override: String? = ProcessInfo.processInfo.environment[TrackingEnvironment.overrideVariable]
  ) -> TrackingEnvironment {
    if let override, !override.isEmpty { return TrackingEnvironment(override) }
    if debug { return .development }
    if receiptURL?.lastPathComponent == "sandboxReceipt" { return .internal }
    return .production
  }

  /// The running app's App Store receipt, where the platform has one (`nil` elsewhere).
  public static var appStoreReceiptURL: URL? {
    #if canImport(Darwin) && !os(watchOS)
      Bundle.main.appStoreReceiptURL
    #else
      nil
    #endif
  }
}

/// One value per environment — a collector URL, a write key, a vendor's app id — as the original
/// design keeps one analytics app per environment: ``production`` for every environment not named.
public struct PerEnvironment<Value: Sendable>: Sendable {
  /// The value of production and of every environment without its own.
  public var production: Value
  /// The values of the other environments, by name.
  public var others: [String: Value]

  /// Values: `production`, and those of `development`, `internal` and any other environment.
  public init(production: Value, development: Value? = nil, internal: Value? = nil, others: [String: Value] = [:]) {
    self.production = production
    self.others = others
    if let development { self.others[TrackingEnvironment.development.name] = development }
    if let `internal` { self.others[TrackingEnvironment.internal.name] = `internal` }
  }

  /// The value of `environment`: its own, else production's.
  public subscript(environment: TrackingEnvironment) -> Value { others[environment.name] ?? production }
}
