public import CollectorStore
import Crypto
import Foundation

/// Write, read and admin keys: generated at random, stored as their SHA-256 only.
///
/// A key reads `ctw_<random>` (write), `ctr_…` (read) or `cta_…` (admin); its id shows its first
/// characters and part of its hash (`trackerctl keys list`, revocation). Keys provisioned through
/// configuration are hashed at start and saved with ``KeyRing/provision(_:now:)``; configuration may
/// give the hash instead of the key (`sha256:<64 hex digits>`, ``hashedPrefix``), so that whoever reads
/// the command line or the configuration file learns no key.
public enum AccessKeys {
  /// A new random key for `scope` (32 random characters from a 62-letter alphabet: 190 bits).
  public static func generate(scope: KeyRecord.Scope) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    var generator = SystemRandomNumberGenerator()
    let random = String((0..<32).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    return prefix(scope) + random
  }

  /// The prefix of generated keys of `scope`.
  public static func prefix(_ scope: KeyRecord.Scope) -> String {
    switch scope {
    case .write: "ctw_"
    case .read: "ctr_"
    case .admin: "cta_"
    }
  }

  /// How configuration names a key by its hash: `sha256:` and 64 lowercase hex digits
  /// (`trackerctl keys hash` prints it).
  public static let hashedPrefix = "sha256:"

  /// The hash a configured value names: the hash itself for `sha256:<hex>`, else the key's hash.
  public static func configuredHash(_ value: String) -> String {
    isHashForm(value) ? String(value.dropFirst(hashedPrefix.count)).lowercased() : hash(value)
  }

  /// Whether `value` is a key given by its hash (`sha256:` and 64 hex digits).
  public static func isHashForm(_ value: String) -> Bool {
    guard value.hasPrefix(hashedPrefix) else { return false }
    let digits = value.utf8.dropFirst(hashedPrefix.utf8.count)
    return digits.count == 64
      && digits.allSatisfy { byte in
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
          || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
      }
  }

  /// Compares two hashes in time that depends on their lengths only, never on where they differ.
  public static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
    let left = Array(lhs.utf8)
    let right = Array(rhs.utf8)
    guard left.count == right.count else { return false }
    var difference: UInt8 = 0
    for index in left.indices { difference |= left[index] ^ right[index] }
    return difference == 0
  }

  /// The stored hash of a key: SHA-256, lowercase hex.
  public static func hash(_ key: String) -> String {
    SHA256.hash(data: Array(key.utf8)).map { byte in
      let digits = Array("0123456789abcdef")
      return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }.joined()
  }

  /// The record to store for `key` (or for the hash it names, ``isHashForm(_:)``). Its id shows the
  /// key's first 8 characters (recognisable in a list; `sha256:` for a hash) and 8 hex digits of its
  /// hash (unique even when provisioned keys share a prefix): never enough of the key to use it.
  public static func record(for key: String, app: String, scope: KeyRecord.Scope, now: Int64) -> KeyRecord {
    let digest = configuredHash(key)
    let shown = isHashForm(key) ? "sha256:" : String(key.prefix(8))
    return KeyRecord(id: "\(shown)…\(digest.prefix(8))", app: app, scope: scope, hash: digest, createdAt: now)
  }
}

/// A key provisioned through configuration: `app=key` for write keys, or a read or admin key; the
/// key may be given by its hash (``AccessKeys/hashedPrefix``).
public struct ProvisionedKey: Sendable, Hashable {
  /// The app it writes to (`*` for read and admin keys).
  public var app: String
  /// The secret, or `sha256:<hex>` naming it by its hash.
  public var key: String
  /// What it may do.
  public var scope: KeyRecord.Scope

  /// A key.
  public init(app: String, key: String, scope: KeyRecord.Scope) {
    self.app = app
    self.key = key
    self.scope = scope
  }
}

/// Authenticates keys against the store, with a short cache so a request costs one hash, not a
/// query. Revocations take effect within ``cacheLifetime``.
public final class KeyRing: Sendable {
  /// How long a looked-up key is trusted without asking the store again (seconds).
  public let cacheLifetime: Double
  private let store: any EventStore
  private let cache = NSLockedDictionary()
  private let active = NSLockedDictionary()

  /// A key ring over `store`.
  public init(store: any EventStore, cacheLifetime: Double = 10) {
    self.store = store
    self.cacheLifetime = cacheLifetime
  }

  /// Saves configured keys (hashed); keys already stored are kept as they are.
  public func provision(_ keys: [ProvisionedKey], now: Int64) async throws {
    for key in keys {
      try await store.saveKey(AccessKeys.record(for: key.key, app: key.app, scope: key.scope, now: now))
    }
  }

  /// The record of a valid (not revoked) key, or `nil`.
  public func authenticate(_ key: String) async throws -> KeyRecord? {
    guard !key.isEmpty, key.utf8.count <= 256 else { return nil }
    let hash = AccessKeys.hash(key)
    let now = Date().timeIntervalSince1970
    if let cached = cache.value(for: hash, now: now) { return cached.record }
    let record = try await store.key(hash: hash).flatMap {
      $0.revokedAt == nil && AccessKeys.constantTimeEqual($0.hash, hash) ? $0 : nil
    }
    cache.set(hash, Cached(record: record, expires: now + cacheLifetime))
    return record
  }

  /// Whether the key with public id `id` exists and is not revoked: a session begun with a key ends
  /// when the key is revoked (within ``cacheLifetime``).
  public func isActive(id: String) async throws -> Bool {
    let now = Date().timeIntervalSince1970
    if let cached = active.value(for: "", now: now)?.ids { return cached.contains(id) }
    let ids = Set(try await store.keys().filter { $0.revokedAt == nil }.map(\.id))
    active.set("", Cached(record: nil, expires: now + cacheLifetime, ids: ids))
    return ids.contains(id)
  }

  struct Cached: Sendable {
    var record: KeyRecord?
    var expires: Double
    var ids: Set<String>? = nil
  }

  /// A small lock-protected cache (bounded: cleared when it grows past 10,000 entries).
  final class NSLockedDictionary: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String: Cached] = [:]

    func value(for key: String, now: Double) -> Cached? {
      lock.lock()
      defer { lock.unlock() }
      guard let entry = entries[key], entry.expires > now else { return nil }
      return entry
    }

    func set(_ key: String, _ value: Cached) {
      lock.lock()
      defer { lock.unlock() }
      if entries.count >= 10_000 { entries.removeAll(keepingCapacity: true) }
      entries[key] = value
    }
  }
}
