public import CollectorStore
import Crypto
import Foundation

/// Dashboard sessions kept in the store: a browser holds a random token, the store its SHA-256.
///
/// ```swift
/// let sessions = SessionRing(store: store, idleSeconds: 12 * 3600, lifetimeSeconds: 7 * 86_400)
/// let started = try await sessions.start(for: keyRecord, now: now)   // started.token goes in the cookie
/// let session = try await sessions.authenticate(token, now: now)     // nil once ended or expired
/// ```
///
/// The token is 256 bits from the system's CSPRNG; nothing in it derives from a key. The CSRF token
/// of a session is derived from its token (``csrf(for:)``), so it needs no storage and is bound to
/// the session: a page's form carries it, and a request without it is refused.
public final class SessionRing: Sendable {
  /// A session just begun: the token for the cookie and its record.
  public struct Started: Sendable {
    /// The secret the browser keeps (64 hex digits).
    public var token: String
    /// What the store keeps.
    public var record: SessionRecord
  }

  /// Idle time after which a session ends (seconds).
  public let idleSeconds: Double
  /// Time after sign-in at which a session ends, used or not (seconds).
  public let lifetimeSeconds: Double
  private let store: any AccessStore
  private let keyIsActive: @Sendable (String) async throws -> Bool

  /// A ring over `store`; `keyIsActive` says whether the key a session began with (by its id) may
  /// still be used: a revoked key's sessions end with it.
  public init(
    store: any AccessStore, idleSeconds: Double, lifetimeSeconds: Double,
    keyIsActive: @escaping @Sendable (String) async throws -> Bool = { _ in true }
  ) {
    self.store = store
    self.idleSeconds = idleSeconds
    self.lifetimeSeconds = lifetimeSeconds
    self.keyIsActive = keyIsActive
  }

  /// Begins a session for an authenticated key, at `now` (ms).
  public func start(for key: KeyRecord, now: Int64) async throws -> Started {
    var generator = SystemRandomNumberGenerator()
    let token = (0..<4).map { _ in Self.hex(generator.next() as UInt64) }.joined()
    let record = SessionRecord(
      hash: AccessKeys.hash(token), keyID: key.id, scope: key.scope, app: key.app, createdAt: now, lastUsedAt: now)
    try await store.saveSession(record)
    return Started(token: token, record: record)
  }

  /// The live session of `token` at `now` (ms): `nil` when unknown, ended, idle too long, too old,
  /// or begun with a key since revoked.
  /// A use is recorded at most once a minute.
  public func authenticate(_ token: String, now: Int64) async throws -> SessionRecord? {
    guard Self.isToken(token) else { return nil }
    let hash = AccessKeys.hash(token)
    guard let record = try await store.session(hash: hash), AccessKeys.constantTimeEqual(record.hash, hash),
      record.endedAt == nil, now - record.lastUsedAt <= Int64(idleSeconds * 1000),
      now - record.createdAt <= Int64(lifetimeSeconds * 1000), try await keyIsActive(record.keyID)
    else { return nil }
    if now - record.lastUsedAt >= 60_000 { try await store.touchSession(hash: hash, at: now) }
    return record
  }

  /// Ends the session of `token` (signing out), everywhere the store is shared.
  public func end(_ token: String, now: Int64) async throws {
    guard Self.isToken(token) else { return }
    try await store.endSession(hash: AccessKeys.hash(token), at: now)
  }

  /// The CSRF token of the session whose token is `token`: a keyed hash of it, so it is the same on
  /// every page of the session, differs between sessions and tells nothing about the token.
  public static func csrf(for token: String) -> String {
    let code = HMAC<SHA256>.authenticationCode(
      for: Array("coretracker-csrf".utf8), using: SymmetricKey(data: Array(token.utf8)))
    return code.map { String(format: "%02x", $0) }.joined()
  }

  /// Whether `presented` is the CSRF token of `token`'s session (compared in constant time).
  public static func checks(csrf presented: String?, token: String) -> Bool {
    guard let presented else { return false }
    return AccessKeys.constantTimeEqual(presented, csrf(for: token))
  }

  private static func isToken(_ text: String) -> Bool {
    text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
  }

  private static func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}

/// The audit trail: every admin action, as a structured log line and a row in the store.
public struct AuditTrail: Sendable {
  private let store: any AccessStore
  private let log: @Sendable (AuditEntry) -> Void

  /// A trail writing to `store` and handing each entry to `log` (a structured line).
  public init(store: any AccessStore, log: @escaping @Sendable (AuditEntry) -> Void) {
    self.store = store
    self.log = log
  }

  /// Records that `actor` (a key id) did `action` with `detail` at `now` (ms). The line is logged
  /// even when the store cannot keep it, and the store's failure is thrown.
  public func record(actor: String, action: String, detail: String, now: Int64) async throws {
    let entry = AuditEntry(time: now, actor: actor, action: action, detail: detail)
    log(entry)
    try await store.appendAudit(entry)
  }

  /// The newest `limit` entries.
  public func entries(limit: Int) async throws -> [AuditEntry] { try await store.auditTrail(limit: limit) }
}
