/// A dashboard session as stored: never the token, only its SHA-256.
///
/// The browser holds a random token in a cookie; the store keeps its hash with the role and the key
/// that signed in, so every collector sharing the store recognises the session, it outlives a
/// restart, and signing out ends it everywhere.
public struct SessionRecord: Sendable, Hashable {
  /// The SHA-256 of the session token, lowercase hex.
  public var hash: String
  /// The public id of the key that signed in (``KeyRecord/id``), never the key.
  public var keyID: String
  /// What the session may do: the signing-in key's scope.
  public var scope: KeyRecord.Scope
  /// The apps it may see (`*`: every app).
  public var app: String
  /// When it began (ms, UTC).
  public var createdAt: Int64
  /// When it was last used (ms, UTC; updated at most once a minute).
  public var lastUsedAt: Int64
  /// When it was ended by signing out, if it was.
  public var endedAt: Int64?

  /// A session record.
  public init(
    hash: String, keyID: String, scope: KeyRecord.Scope, app: String, createdAt: Int64, lastUsedAt: Int64,
    endedAt: Int64? = nil
  ) {
    self.hash = hash
    self.keyID = keyID
    self.scope = scope
    self.app = app
    self.createdAt = createdAt
    self.lastUsedAt = lastUsedAt
    self.endedAt = endedAt
  }
}

extension SessionRecord {
  /// Who acts through the session: the signing-in key's id, role and apps (never its hash).
  public var principal: KeyRecord {
    KeyRecord(id: keyID, app: app, scope: scope, hash: "", createdAt: createdAt)
  }
}

/// One line of the audit trail: who (a key's public id, never the key) did what, when.
public struct AuditEntry: Sendable, Hashable, Codable {
  /// When (ms, UTC).
  public var time: Int64
  /// The key id that acted (``KeyRecord/id``), or `collector` for the collector itself.
  public var actor: String
  /// What was done: `erase`, `sign-in`, `sign-out`, `key-create`, `key-revoke`, `key-provision`,
  /// `retention`.
  public var action: String
  /// The details: the app, the subject, the figures (never a secret).
  public var detail: String

  /// An entry.
  public init(time: Int64, actor: String, action: String, detail: String) {
    self.time = time
    self.actor = actor
    self.action = action
    self.detail = detail
  }
}

/// Dashboard sessions and the audit trail: what signing in, signing out and every admin action
/// keep in the store, so that several collectors sharing it agree.
public protocol AccessStore: Sendable {
  /// Stores a new session.
  func saveSession(_ session: SessionRecord) async throws

  /// The session with this token hash, ended or not.
  func session(hash: String) async throws -> SessionRecord?

  /// Records that the session was used at `time`.
  func touchSession(hash: String, at time: Int64) async throws

  /// Ends the session (signing out); later look-ups return it with ``SessionRecord/endedAt`` set.
  func endSession(hash: String, at time: Int64) async throws

  /// Appends an entry to the audit trail.
  func appendAudit(_ entry: AuditEntry) async throws

  /// The newest `limit` entries of the audit trail, newest first.
  func auditTrail(limit: Int) async throws -> [AuditEntry]
}
