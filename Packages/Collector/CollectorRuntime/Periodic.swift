import Logging
import ServiceLifecycle

/// Runs `pass` now and then every `interval` until the task is cancelled or the service group
/// shuts down gracefully; a pass that throws is logged as `failure` with its error, and the next one
/// runs as planned (the background jobs' loop).
func repeatUntilShutdown(
  every interval: Duration, logger: Logger, failure: String, _ pass: () async throws -> Void
) async {
  while !Task.isCancelled && !Task.isShuttingDownGracefully {
    do {
      try await pass()
    } catch {
      logger.error("\(failure): \(error)")
    }
    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
  }
}
