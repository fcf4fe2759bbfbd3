public import CoreTracker
public import Foundation

/// What one answer to a batch means for its records.
public enum DeliveryOutcome: Sendable, Hashable {
  /// Every record was accepted (2xx).
  case delivered
  /// The server stored some and rejected the records at these indices (in the batch), with reasons.
  case partial(rejected: [Int: String])
  /// Try again later: 408, 429, 5xx or a transport error; `after` is the server's `Retry-After`.
  case retry(after: TimeInterval?, error: String)
  /// The batch is too large (413): send it in halves.
  case split
  /// The server refused the batch for good (another 4xx): drop it with this reason.
  case drop(DropReason, error: String)
}

extension DropReason {
  /// One record was larger than the server accepts even alone (413 on a batch of one).
  public static let tooLargeForServer = DropReason("too_large_for_server")
  /// Older than the maximum event age before it could be delivered.
  public static let expired = DropReason("expired")
}

/// When to try again: exponential back-off with full jitter, honouring `Retry-After`, and a maximum
/// event age after which records are dropped (`expired`).
public struct RetryPolicy: Sendable, Hashable {
  /// The first back-off ceiling.
  public var initialDelay: TimeInterval
  /// The largest back-off ceiling.
  public var maximumDelay: TimeInterval
  /// Records older than this are dropped with ``DropReason/expired`` instead of sent.
  public var maximumEventAge: TimeInterval

  /// Creates a policy. Defaults: 1 s doubling to 60 s, events kept 7 days.
  public init(
    initialDelay: TimeInterval = 1, maximumDelay: TimeInterval = 60, maximumEventAge: TimeInterval = 7 * 86_400
  ) {
    self.initialDelay = initialDelay
    self.maximumDelay = maximumDelay
    self.maximumEventAge = maximumEventAge
  }

  /// The wait before retry number `attempt` (1 for the first retry): `Retry-After` when the server
  /// gave one, otherwise uniformly random in `0...min(maximumDelay, initialDelay × 2^(attempt−1))`.
  public func delay(attempt: Int, retryAfter: TimeInterval?, random: inout some RandomNumberGenerator) -> TimeInterval {
    if let retryAfter { return max(0, retryAfter) }
    let ceiling = min(maximumDelay, initialDelay * pow(2, Double(max(0, attempt - 1))))
    return Double.random(in: 0...max(0, ceiling), using: &random)
  }

  /// The default meaning of an HTTP status for a batch; formats refine 2xx (partial success).
  public static func outcome(status: Int, headers: [String: String]) -> DeliveryOutcome {
    switch status {
    case 200..<300: return .delivered
    case 413: return .split
    case 408, 429, 500..<600:
      return .retry(after: headers["retry-after"].flatMap(retryAfterSeconds), error: "HTTP \(status)")
    default: return .drop(.rejectedByServer, error: "HTTP \(status)")
    }
  }

  /// `Retry-After` as seconds: a number of seconds, or an HTTP date.
  public static func retryAfterSeconds(_ value: String) -> TimeInterval? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    if let seconds = TimeInterval(trimmed), seconds >= 0 { return seconds }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    return formatter.date(from: trimmed).map { max(0, $0.timeIntervalSinceNow) }
  }
}
