import CollectorRuntime

extension CollectorConfiguration {
  /// Sessions, cookies, proxies and the bounds on each request's work (Docs/Security.md).
  public struct Security: Sendable, Hashable {
    /// When the session cookie carries `Secure` (and the `__Host-` name).
    public enum SecureCookies: String, Sendable, Hashable {
      /// When the request came over TLS: through a proxy that says so (`X-Forwarded-Proto: https`
      /// with ``trustProxy``).
      case auto
      /// Always (the collector is only reached over HTTPS).
      case always
      /// Never (plain HTTP on a trusted network).
      case never
    }

    /// A session ends after this long unused (seconds; default 12 h).
    public var sessionIdleSeconds: Double = 12 * 3600
    /// A session ends this long after sign-in, used or not (seconds; default 7 days).
    public var sessionLifetimeSeconds: Double = 7 * 86_400
    /// When cookies are `Secure`.
    public var secureCookies = SecureCookies.auto
    /// Whether `X-Forwarded-For` and `X-Forwarded-Proto` are believed (a proxy in front sets them).
    public var trustProxy = false
    /// Sign-in attempts per client address per minute before 429.
    public var signInAttemptsPerMinute = 10
    /// Reports computed at once; more wait in line.
    public var reportConcurrency = 2
    /// Reports waiting for a turn before 503.
    public var reportQueue = 32
    /// The longest a report may take, waiting included, before 503 (seconds).
    public var reportTimeoutSeconds: Double = 30
    /// Connections one client address may hold open at once; past it, its new ones are closed.
    public var maximumConnectionsPerAddress = 64

    /// The defaults.
    public init() {}
  }

  static let securitySettings: [Setting] = [
    Setting(key: "session-idle-hours", help: "dashboard sessions end after this long unused (default 12)"),
    Setting(key: "session-lifetime-days", help: "dashboard sessions end this long after sign-in (default 7)"),
    Setting(key: "secure-cookies", help: "auto (when a trusted proxy says https, default), always or never"),
    Setting(key: "trust-proxy", help: "true to believe X-Forwarded-For and X-Forwarded-Proto (default false)"),
    Setting(key: "sign-in-attempts", help: "sign-in attempts per client address per minute (default 10)"),
    Setting(key: "report-concurrency", help: "reports computed at once; more wait (default 2)"),
    Setting(key: "report-queue", help: "reports waiting for a turn before 503 (default 32)"),
    Setting(key: "report-timeout", help: "seconds a report may take, waiting included, before 503 (default 30)"),
    Setting(key: "max-connections-per-address", help: "connections one client address may hold (default 64)"),
  ]

  mutating func applySecurity(_ settings: SettingValues) throws(Problem) {
    if let hours = try settings.integer("session-idle-hours", 1...8760) {
      security.sessionIdleSeconds = Double(hours) * 3600
    }
    if let days = try settings.integer("session-lifetime-days", 1...365) {
      security.sessionLifetimeSeconds = Double(days) * 86_400
    }
    if let entry = settings.value("secure-cookies") {
      guard let mode = Security.SecureCookies(rawValue: entry.value) else {
        throw settings.fail("secure-cookies", "secure-cookies must be auto, always or never, not \"\(entry.value)\"")
      }
      security.secureCookies = mode
    }
    if let entry = settings.value("trust-proxy") {
      guard let flag = Bool(entry.value) ?? ["1": true, "0": false][entry.value] else {
        throw settings.fail("trust-proxy", "trust-proxy must be true or false, not \"\(entry.value)\"")
      }
      security.trustProxy = flag
    }
    if let attempts = try settings.integer("sign-in-attempts", 1...10_000) {
      security.signInAttemptsPerMinute = attempts
    }
    if let count = try settings.integer("report-concurrency", 1...256) { security.reportConcurrency = count }
    if let count = try settings.integer("report-queue", 0...100_000) { security.reportQueue = count }
    if let seconds = try settings.seconds("report-timeout") { security.reportTimeoutSeconds = seconds }
    if let count = try settings.integer("max-connections-per-address", 1...1_000_000) {
      security.maximumConnectionsPerAddress = count
    }
  }
}
