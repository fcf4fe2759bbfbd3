import Foundation

/// A token bucket per key: `rate` events per second, up to `burst` at once.
///
/// A request costs its number of events and counters (at least 1). When the bucket lacks the
/// tokens, the request is refused with the seconds until it would fit (`Retry-After`); nothing is
/// taken from the bucket then.
public final class RateLimiter: @unchecked Sendable {
  /// Events per second per key; `nil` turns limiting off.
  public let rate: Double?
  /// The bucket's size.
  public let burst: Double
  private let clock: @Sendable () -> Double
  private let lock = NSLock()
  private var buckets: [String: (tokens: Double, updated: Double)] = [:]

  /// A limiter; `burst` defaults to twice the rate and is at least `minimumBurst` (one full batch,
  /// 2500 events, for ingestion). Buckets refill by `clock` (seconds since 1970; the wall clock by
  /// default).
  public init(
    rate: Double?, burst: Double? = nil, minimumBurst: Double = 2500,
    clock: @escaping @Sendable () -> Double = RateLimiter.wallClock
  ) {
    self.rate = rate.flatMap { $0 > 0 ? $0 : nil }
    self.burst = max(burst ?? (rate ?? 0) * 2, minimumBurst, 1)
    self.clock = clock
  }

  /// Seconds since 1970 by the system's clock.
  public static let wallClock: @Sendable () -> Double = { Date().timeIntervalSince1970 }

  /// Takes `cost` tokens from `key`'s bucket at time `now` (seconds; default: the limiter's clock),
  /// or returns the whole seconds to wait before retrying.
  public func take(_ cost: Int, key: String, now: Double? = nil) -> Int? {
    guard let rate else { return nil }
    let now = now ?? clock()
    let cost = min(max(Double(cost), 1), burst)
    lock.lock()
    defer { lock.unlock() }
    if buckets.count >= 100_000, buckets[key] == nil {
      // Bounded: many keys (client addresses, for sign-in) cannot grow the table without end; a
      // bucket that has refilled holds nothing worth keeping.
      buckets = buckets.filter { $0.value.tokens + (now - $0.value.updated) * rate < burst }
    }
    var bucket = buckets[key] ?? (burst, now)
    bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * rate)
    bucket.updated = now
    if bucket.tokens >= cost {
      bucket.tokens -= cost
      buckets[key] = bucket
      return nil
    }
    buckets[key] = bucket
    return max(1, Int(((cost - bucket.tokens) / rate).rounded(.up)))
  }
}
