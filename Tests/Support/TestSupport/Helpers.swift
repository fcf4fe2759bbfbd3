public import Foundation

/// A fresh directory under the temporary directory, removed when the value goes away.
public struct TemporaryDirectory: ~Copyable {
  /// The directory's URL (not created: the code under test creates what it owns).
  public let url: URL

  /// A new, unique directory name.
  public init(prefix: String = "coretracker") {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
  }

  deinit { try? FileManager.default.removeItem(at: url) }
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns its last value.
public func waitUntil(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 20_000_000)
  }
  return condition()
}

/// A counter test servers' handlers can share across requests.
public final class LockedCounter: @unchecked Sendable {
  // @unchecked: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value = 0

  public init() {}

  /// Adds one and returns the new value (1 for the first call).
  public func next() -> Int {
    lock.withLock {
      value += 1
      return value
    }
  }
}

/// A flag a test flips while a server handler reads it.
public final class LockedFlag: @unchecked Sendable {
  // @unchecked: `stored` is only touched under `lock`.
  private let lock = NSLock()
  private var stored: Bool

  public init(_ value: Bool) { stored = value }

  /// The current value.
  public var value: Bool {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}
