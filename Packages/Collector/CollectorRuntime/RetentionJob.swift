public import CollectorStore
import Foundation
public import Logging
public import ServiceLifecycle

/// Retention: how many days each app's events are kept.
public struct RetentionPolicy: Sendable, Hashable {
  /// Days for apps without their own setting; `nil` keeps events forever.
  public var defaultDays: Int?
  /// Days per app.
  public var perApp: [String: Int]

  /// A policy.
  public init(defaultDays: Int? = nil, perApp: [String: Int] = [:]) {
    self.defaultDays = defaultDays
    self.perApp = perApp
  }

  /// Days the quarantine keeps an entry (`nil`: forever).
  public var quarantineDays: Int? = 30

  /// Whether anything is ever pruned.
  public var isEnabled: Bool { defaultDays != nil || !perApp.isEmpty || quarantineDays != nil }

  /// The cut-offs at `now` (ms since 1970).
  public func cutoffs(now: Int64) -> PruneCutoffs {
    PruneCutoffs(
      defaultCutoff: defaultDays.map { now - Int64($0) * 86_400_000 },
      perApp: perApp.mapValues { now - Int64($0) * 86_400_000 }
    )
  }
}

/// Prunes events past their app's retention, once at start and then every `interval`, until
/// graceful shutdown.
public struct RetentionJob: Service {
  private let store: any EventStore
  private let policy: RetentionPolicy
  private let interval: Duration
  private let logger: Logger

  /// A job pruning `store` by `policy` every `interval`.
  public init(store: any EventStore, policy: RetentionPolicy, interval: Duration = .seconds(3600), logger: Logger) {
    self.store = store
    self.policy = policy
    self.interval = interval
    self.logger = logger
  }

  /// Runs one pass as of `now` (ms since 1970; default: the current time); returns the rows deleted.
  @discardableResult
  public func runOnce(now: Int64? = nil) async throws -> Int {
    let now = now ?? Int64(Date().timeIntervalSince1970 * 1000)
    var deleted = 0
    if policy.defaultDays != nil || !policy.perApp.isEmpty {
      deleted += try await store.prune(policy.cutoffs(now: now))
    }
    if let days = policy.quarantineDays {
      deleted += try await store.purgeQuarantine(app: nil, before: now - Int64(days) * 86_400_000)
    }
    if deleted > 0 { logger.info("retention pruned \(deleted) rows") }
    return deleted
  }

  public func run() async throws {
    guard policy.isEnabled else {
      try? await gracefulShutdown()
      return
    }
    await repeatUntilShutdown(every: interval, logger: logger, failure: "retention failed") { try await runOnce() }
  }
}
