import CollectorStore
import Foundation
import TestSupport
import Testing

/// Read keys, dashboard sessions and the audit trail on every engine: what several collectors
/// sharing one store rely on.
@Suite("Access store conformance")
struct AccessStoreTests {
  @Test("keys of every role are stored and found by their hash", arguments: Engine.available)
  func roles(engine: Engine) async throws {
    let store = try await engine.open()
    for scope in KeyRecord.Scope.allCases {
      let record = KeyRecord(
        id: "\(scope.rawValue)…1", app: "*", scope: scope,
        hash: String(repeating: "a", count: 60) + scope.rawValue.prefix(4),
        createdAt: 1)
      try await store.saveKey(record)
      #expect(try await store.key(hash: record.hash)?.scope == scope)
    }
    try await store.close()
  }

  @Test("a session is kept by its hash, used, ended; an end is never undone by a late use", arguments: Engine.available)
  func sessions(engine: Engine) async throws {
    let store = try await engine.open()
    let record = SessionRecord(
      hash: String(repeating: "1f", count: 32), keyID: "cta_abc…1234", scope: .read, app: "*", createdAt: 1_000,
      lastUsedAt: 1_000)
    try await store.saveSession(record)
    #expect(try await store.session(hash: record.hash) == record)
    #expect(try await store.session(hash: String(repeating: "2e", count: 32)) == nil)
    try await store.touchSession(hash: record.hash, at: 90_000)
    #expect(try await store.session(hash: record.hash)?.lastUsedAt == 90_000)
    try await store.endSession(hash: record.hash, at: 100_000)
    try await store.touchSession(hash: record.hash, at: 200_000)
    let ended = try #require(try await store.session(hash: record.hash))
    #expect(ended.endedAt == 100_000 && ended.lastUsedAt == 90_000)
    try await store.close()
  }

  @Test("the audit trail keeps entries newest first", arguments: Engine.available)
  func audit(engine: Engine) async throws {
    let store = try await engine.open()
    for index in 0..<5 {
      try await store.appendAudit(
        AuditEntry(time: Int64(index) * 1_000, actor: "cta_k…\(index)", action: "erase", detail: "device d\(index)"))
    }
    let newest = try await store.auditTrail(limit: 3)
    #expect(newest.map(\.detail) == ["device d4", "device d3", "device d2"])
    #expect(newest.first == AuditEntry(time: 4_000, actor: "cta_k…4", action: "erase", detail: "device d4"))
    try await store.close()
  }
}
