import Foundation

/// A value behind a lock: the one place CoreTracker keeps shared mutable state.
///
/// `@unchecked Sendable` is safe because every access to `value` goes through `withLock`, which
/// holds `lock` for the whole access (the pattern of swift-log's `RWLockedValueBox`). `Mutex` from
/// the Synchronization module would do the same, but needs iOS 18 / macOS 15.
package final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  package init(_ value: Value) { self.value = value }

  /// Runs `body` with exclusive access to the value.
  @inline(__always)
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  /// A copy of the value.
  package var snapshot: Value { withLock { $0 } }
}
