import Foundation

/// A bounded fan-out of what the collector has just stored, for watchers such as the dashboard's
/// live page.
///
/// Publishing never waits and costs one lock when no one watches: ``publish(_:)`` does not even
/// build the items then. Each watcher has a buffer of ``bufferSize`` items; one that reads too
/// slowly loses the oldest (counted by ``skipped(_:)``), never slowing ingestion. At most
/// ``maximumWatchers`` watch at once.
///
/// ```swift
/// let feed = LiveFeed<String>()
/// guard let watch = feed.watch({ $0.hasPrefix("ty") }) else { return }  // nil: too many watchers
/// defer { feed.stop(watch.id) }
/// for await item in watch.items { print(item) }
/// ```
public final class LiveFeed<Item: Sendable>: @unchecked Sendable {
  /// One watcher's stream: the items its filter admits, from the moment it started.
  public struct Watch: Sendable {
    /// The watcher's number, for ``LiveFeed/stop(_:)`` and ``LiveFeed/skipped(_:)``.
    public let id: UInt64
    /// The items, in the order they were published; ends when the watcher is stopped.
    public let items: AsyncStream<Item>
  }

  private struct Watcher {
    let admits: @Sendable (Item) -> Bool
    let continuation: AsyncStream<Item>.Continuation
    var skipped = 0
  }

  /// How many may watch at once.
  public let maximumWatchers: Int
  /// How many items a watcher may fall behind before it loses the oldest.
  public let bufferSize: Int
  private let lock = NSLock()
  private var watchers: [UInt64: Watcher] = [:]
  private var nextID: UInt64 = 0

  /// A feed for at most `maximumWatchers` watchers, each `bufferSize` items behind at most.
  public init(maximumWatchers: Int = 32, bufferSize: Int = 1000) {
    self.maximumWatchers = max(1, maximumWatchers)
    self.bufferSize = max(1, bufferSize)
  }

  /// How many watch now.
  public var watcherCount: Int { lock.withLock { watchers.count } }

  /// Starts watching the items `admits` accepts; `nil` when ``maximumWatchers`` already watch.
  public func watch(_ admits: @escaping @Sendable (Item) -> Bool) -> Watch? {
    let (items, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingNewest(bufferSize))
    let id: UInt64? = lock.withLock {
      guard watchers.count < maximumWatchers else { return nil }
      nextID += 1
      watchers[nextID] = Watcher(admits: admits, continuation: continuation)
      return nextID
    }
    guard let id else { return nil }
    continuation.onTermination = { [weak self] _ in self?.remove(id) }
    return Watch(id: id, items: items)
  }

  /// Ends the watcher's stream and forgets it.
  public func stop(_ id: UInt64) {
    lock.withLock { watchers[id] }?.continuation.finish()
    remove(id)
  }

  /// The items the watcher lost so far because it fell behind.
  public func skipped(_ id: UInt64) -> Int { lock.withLock { watchers[id]?.skipped ?? 0 } }

  /// Hands each item of `items()` to every watcher that admits it. `items` is called only when
  /// someone watches, once, outside the lock.
  public func publish(_ items: () -> [Item]) {
    let current = lock.withLock { watchers }
    guard !current.isEmpty else { return }
    let made = items()
    for (id, watcher) in current {
      var lost = 0
      for item in made where watcher.admits(item) {
        if case .dropped = watcher.continuation.yield(item) { lost += 1 }
      }
      if lost > 0 { lock.withLock { watchers[id]?.skipped += lost } }
    }
  }

  private func remove(_ id: UInt64) {
    _ = lock.withLock { watchers.removeValue(forKey: id) }
  }
}
