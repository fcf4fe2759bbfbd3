public import CollectorStore
public import Logging
public import ServiceLifecycle

/// Runs the store's ``EventStore/reconcile()`` every `interval` until graceful shutdown: on
/// ClickHouse it rebuilds the rollup hours a copy of an event inflated after a background merge
/// removed the copy before the write could see it. A no-op on the SQL stores.
public struct ReconcileJob: Service {
  private let store: any EventStore
  private let interval: Duration
  private let logger: Logger

  /// A job reconciling `store` every `interval` (five minutes unless told).
  public init(store: any EventStore, interval: Duration = .seconds(300), logger: Logger) {
    self.store = store
    self.interval = interval
    self.logger = logger
  }

  public func run() async throws {
    while !Task.isCancelled && !Task.isShuttingDownGracefully {
      try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
      guard !Task.isCancelled && !Task.isShuttingDownGracefully else { return }
      do {
        let rebuilt = try await store.reconcile()
        if rebuilt > 0 { logger.warning("reconciliation rebuilt \(rebuilt) rollup hours") }
      } catch {
        logger.error("reconciliation failed: \(error)")
      }
    }
  }
}
