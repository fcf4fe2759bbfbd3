public import CollectorStore
import Foundation
public import Logging
public import ServiceLifecycle

/// Builds the store's device sets (``DeviceSetKeeping``) for the hours that ended `settled` ago or
/// earlier, once at start and then every `interval`, until graceful shutdown; a no-op on a store
/// that keeps none. Reports read the sets of built hours and the names rollup for the rest, so the
/// job only makes them faster: nothing waits for it. On ClickHouse it builds the closed days (top
/// events, sessions, devices and top items over whole UTC days) once a day has ended `settled` ago.
public struct DeviceSetJob: Service {
  private let store: any EventStore
  /// In ms.
  private let settled: Int64
  private let interval: Duration
  private let logger: Logger

  /// A job building `store`'s sets every `interval` (ten minutes unless told) for hours that ended
  /// at least `settled` ago (two hours unless told: later events of an hour delete its sets).
  public init(
    store: any EventStore, settled: Duration = .seconds(7_200), interval: Duration = .seconds(600), logger: Logger
  ) {
    self.store = store
    self.settled = settled.components.seconds * 1_000 + settled.components.attoseconds / 1_000_000_000_000_000
    self.interval = interval
    self.logger = logger
  }

  /// Builds once, as of `now` (ms since 1970; default: the current time); returns the hours built.
  @discardableResult
  public func runOnce(now: Int64? = nil) async throws -> Int {
    guard let keeper = store as? any DeviceSetKeeping else { return 0 }
    let now = now ?? Int64(Date().timeIntervalSince1970 * 1000)
    let built = try await keeper.buildDeviceSets(before: now - settled)
    // Hours of device sets on the SQL stores, days on ClickHouse (its closed days).
    if built > 0 { logger.info("report caches built", metadata: ["built": "\(built)"]) }
    return built
  }

  public func run() async throws {
    guard store is any DeviceSetKeeping else {
      try? await gracefulShutdown()
      return
    }
    await repeatUntilShutdown(every: interval, logger: logger, failure: "building device sets failed") {
      try await runOnce()
    }
  }
}
