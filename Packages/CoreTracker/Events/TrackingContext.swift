public import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What every event says about where it came from: app, operating system, device, locale, library.
///
/// The tracker fills it once at start (``current(bundle:)``); apps and simulations may pass their
/// own. It carries no personal data.
public struct TrackingContext: Sendable, Hashable, Codable {
  /// The app's name, e.g. `Trendyol`.
  public var appName: String
  /// The app's marketing version, e.g. `5.12.0`.
  public var appVersion: String
  /// The app's build number, e.g. `5120`.
  public var appBuild: String
  /// The operating system's name: `iOS`, `macOS`, `Linux`, ...
  public var osName: String
  /// The operating system's version, e.g. `17.4.1`.
  public var osVersion: String
  /// The platform the app runs as: `iOS`, `iPadOS`, `macOS`, `tvOS`, `watchOS`, `visionOS`, `Linux`, ...
  public var platform: String
  /// The device model where known (`iPhone15,2`, `arm64`), otherwise empty.
  public var deviceModel: String
  /// The user's locale identifier, e.g. `tr_TR`.
  public var locale: String
  /// The time zone identifier, e.g. `Europe/Istanbul`.
  public var timeZone: String
  /// The tracking library's name.
  public var libraryName: String
  /// The tracking library's version.
  public var libraryVersion: String
  /// The build's environment (``TrackingEnvironment``'s name): `production` unless the
  /// configuration names another.
  public var environment: String

  /// Creates a context; every field has a neutral default.
  public init(
    appName: String = "",
    appVersion: String = "",
    appBuild: String = "",
    osName: String = "",
    osVersion: String = "",
    platform: String = "",
    deviceModel: String = "",
    locale: String = "",
    timeZone: String = "",
    libraryName: String = TrackingContext.libraryName,
    libraryVersion: String = TrackingContext.libraryVersion,
    environment: String = TrackingEnvironment.production.name
  ) {
    self.appName = appName
    self.appVersion = appVersion
    self.appBuild = appBuild
    self.osName = osName
    self.osVersion = osVersion
    self.platform = platform
    self.deviceModel = deviceModel
    self.locale = locale
    self.timeZone = timeZone
    self.libraryName = libraryName
    self.libraryVersion = libraryVersion
    self.environment = environment
  }

  /// Decodes a context; one written before ``environment`` existed is `production`'s.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    func text(_ key: CodingKeys) throws -> String { try container.decode(String.self, forKey: key) }
    self.init(
      appName: try text(.appName), appVersion: try text(.appVersion), appBuild: try text(.appBuild),
      osName: try text(.osName), osVersion: try text(.osVersion), platform: try text(.platform),
      deviceModel: try text(.deviceModel), locale: try text(.locale), timeZone: try text(.timeZone),
      libraryName: try text(.libraryName), libraryVersion: try text(.libraryVersion),
      environment: try container.decodeIfPresent(String.self, forKey: .environment)
        ?? TrackingEnvironment.production.name)
  }

  /// This library's name as it appears in every event's context.
  public static let libraryName = "CoreTracker"
  /// This library's version as it appears in every event's context.
  public static let libraryVersion = "0.1.0"

  /// The context of the running process: the bundle's name and versions where there is a bundle
  /// (the process name otherwise), the OS, the platform, the device model, locale and time zone.
  public static func current(bundle: Bundle = .main) -> TrackingContext {
    let info = bundle.infoDictionary ?? [:]
    let version = ProcessInfo.processInfo.operatingSystemVersion
    return TrackingContext(
      appName: (info["CFBundleName"] as? String) ?? ProcessInfo.processInfo.processName,
      appVersion: (info["CFBundleShortVersionString"] as? String) ?? "",
      appBuild: (info["CFBundleVersion"] as? String) ?? "",
      osName: platformName,
      osVersion: "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)",
      platform: platformName,
      deviceModel: machineName(),
      locale: Locale.current.identifier,
      timeZone: TimeZone.current.identifier
    )
  }

  private static var platformName: String {
    #if os(iOS)
      #if targetEnvironment(macCatalyst)
        "macCatalyst"
      #else
        "iOS"
      #endif
    #elseif os(macOS)
      "macOS"
    #elseif os(tvOS)
      "tvOS"
    #elseif os(watchOS)
      "watchOS"
    #elseif os(visionOS)
      "visionOS"
    #elseif os(Linux)
      "Linux"
    #elseif os(Windows)
      "Windows"
    #elseif os(Android)
      "Android"
    #else
      "unknown"
    #endif
  }

  /// `uname`'s machine: the model identifier on Apple devices (`iPhone15,2`), the architecture elsewhere.
  private static func machineName() -> String {
    #if canImport(Darwin) || canImport(Glibc) || canImport(Musl)
      var system = utsname()
      guard uname(&system) == 0 else { return "" }
      return withUnsafeBytes(of: &system.machine) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
    #else
      return ""
    #endif
  }
}
