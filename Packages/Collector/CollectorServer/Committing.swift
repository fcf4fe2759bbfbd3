import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

extension EventCollector {
  /// Rate-limits, commits (a 2xx only after the commit) and counts one request's rows: 429 past the
  /// key's rate, 503 when the group committer is full or the store fails (nothing stored).
  func commit(_ result: IngestResult, key: KeyRecord, route: String) async throws {
    let cost = result.rows.events.count + result.rows.counters.count
    if let wait = limiter.take(cost, key: key.id) {
      throw Refusal(
        .tooManyRequests, "", "rate limit of \(Int(limiter.rate ?? 0)) events/s for this key", retryAfter: wait)
    }
    let rows = result.rows.environmentsResolved
    do {
      try await committer.commit(rows)
    } catch GroupCommitter.CommitError.overloaded {
      throw Refusal.busy
    } catch {
      logger.error("commit failed: \(error)")
      throw Refusal.storage()
    }
    publishLive(rows)
    metrics.accepted(result.rows.events.count, route: route)
    metrics.planWarnings(result.planWarnings.count)
    let tooOld = result.rejected.count { policy.isTooOld($0) }
    metrics.rejected(result.rejected.count - tooOld, reason: "invalid")
    metrics.rejected(tooOld, reason: "too_old")
  }

  /// The receiving time, ms since 1970.
  static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

  /// Runs a report through ``reportGate``: 503 with `Retry-After` when it cannot start or finish in time.
  func report<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
    do {
      return try await reportGate.run(work)
    } catch let refused as ReportGate.Refused {
      throw Refusal(.serviceUnavailable, "", refused.reason, retryAfter: refused.retryAfter)
    }
  }

  /// Records an admin action in the audit trail; a store that cannot keep it is logged, not fatal
  /// to an action already done.
  func audited(_ key: KeyRecord, _ action: String, _ detail: String) async {
    do {
      try await audit.record(actor: key.id, action: action, detail: detail, now: Self.now())
    } catch {
      logger.error("audit: the store did not keep \(action) by \(key.id): \(error)")
    }
  }

  /// A route behind error mapping and metrics (``SurfaceMiddleware``), answering refusals with
  /// `answer` (the native JSON error by default).
  func surface(
    _ route: String,
    answer: @escaping @Sendable (Refusal) -> Response = { $0.response(body: BatchWriter.refusal($0.error)) }
  ) -> SurfaceMiddleware {
    SurfaceMiddleware(route: route, metrics: metrics, answer: answer)
  }

  /// The body of a write route, refused before it is read while the store has no room
  /// (``GroupCommitter/isFull``).
  func writeBody(
    limit: Int = CollectorLimits.maximumRequestBytes, inflatedLimit: Int = CollectorLimits.maximumDecompressedBytes
  ) -> BodyMiddleware {
    BodyMiddleware(limit: limit, inflatedLimit: inflatedLimit) { [committer] in committer.isFull }
  }

  /// Authentication for `scope` with keys presented as `source`, or (`sessions`) a dashboard
  /// session's cookie.
  func keys(_ scope: KeyRecord.Scope, from source: KeySource, sessions: Bool = false) -> KeyMiddleware {
    KeyMiddleware(scope: scope, source: source, keyRing: keyRing, sessions: sessions ? self.sessions : nil)
  }

  /// The key a request presented in its body (Segment's `writeKey`), authenticated for `scope` by
  /// the rules of every route.
  func authenticate(bodyKey: String?, _ scope: KeyRecord.Scope) async throws -> KeyRecord {
    try await keys(scope, from: .segment).authenticate(bodyKey)
  }
}
