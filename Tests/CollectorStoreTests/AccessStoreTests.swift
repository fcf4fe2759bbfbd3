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

/// The quarantine and the SimpleAnalytics submission memory on every engine.
@Suite("Quarantine store conformance")
struct QuarantineStoreTests {
  static func entry(_ id: String, app: String = "ty", at time: Int64) -> QuarantinedEntry {
    QuarantinedEntry(
      id: id, app: app, route: "batch", receivedAt: time, entry: #"{"events":[{"id":"\#(id)"}]}"#,
      reasons: ["events[0].name: is required", "events[0].kind: is required"])
  }

  @Test("entries are kept once by id, listed newest first, resolved, purged", arguments: Engine.available)
  func quarantine(engine: Engine) async throws {
    let store = try await engine.open()
    let first = Self.entry("q1", at: 1_000)
    _ = try await store.write(StoreBatch(quarantined: [first, Self.entry("q2", at: 2_000)]))
    _ = try await store.write(StoreBatch(quarantined: [first, Self.entry("q3", app: "dl", at: 3_000)]))
    #expect(try await store.quarantined(app: "ty", limit: 10, includeReplayed: false).map(\.id) == ["q2", "q1"])
    #expect(try await store.quarantinedCount(app: "ty", from: 0, to: 10_000) == 2)
    #expect(try await store.quarantinedCount(app: "ty", from: 1_500, to: 10_000) == 1)
    #expect(
      try await store.quarantined(app: nil, limit: 10, includeReplayed: false).first
        == Self.entry("q3", app: "dl", at: 3_000))
    try await store.resolveQuarantined(id: "q1", replayedAt: 5_000, reasons: first.reasons)
    try await store.resolveQuarantined(id: "q2", replayedAt: nil, reasons: ["events[0].name: still missing"])
    #expect(
      try await store.quarantined(app: "ty", limit: 10, includeReplayed: false).map(\.reasons) == [
        ["events[0].name: still missing"]
      ])
    #expect(try await store.quarantined(app: "ty", limit: 10, includeReplayed: true).last?.replayedAt == 5_000)
    // Quarantined again by a retried request: the replay is not undone.
    _ = try await store.write(StoreBatch(quarantined: [first]))
    #expect(try await store.quarantined(app: "ty", limit: 10, includeReplayed: false).map(\.id) == ["q2"])
    #expect(try await store.quarantinedCount(app: "ty", from: 0, to: 10_000) == 1)
    #expect(try await store.purgeQuarantine(app: "ty", before: 1_500) == 1)
    #expect(try await store.purgeQuarantine(app: nil, before: 10_000) == 2)
    #expect(try await store.quarantined(app: nil, limit: 10, includeReplayed: true).isEmpty)
    try await store.close()
  }

  @Test("a device's submissions are remembered newest first, with their entries in order", arguments: Engine.available)
  func submissions(engine: Engine) async throws {
    let store = try await engine.open()
    for index in 0..<20 {
      let submission = StoredSubmission(
        app: "ty", deviceID: "d1", receivedAt: Int64(index) * 1_000,
        items: [.init(fingerprint: "f\(index)", id: "e\(index)"), .init(fingerprint: "g", id: "h\(index)")],
        counters: [.init(fingerprint: "c", id: "k\(index)", count: Int64(index))])
      _ = try await store.write(StoreBatch(submissions: [submission]))
    }
    let recent = try await store.recentSubmissions(app: "ty", deviceID: "d1", limit: 3)
    #expect(recent.map(\.receivedAt) == [19_000, 18_000, 17_000])
    #expect(recent.first?.items == [.init(fingerprint: "f19", id: "e19"), .init(fingerprint: "g", id: "h19")])
    #expect(recent.first?.counters == [.init(fingerprint: "c", id: "k19", count: 19)])
    #expect(try await store.recentSubmissions(app: "ty", deviceID: "d2", limit: 3).isEmpty)
    try await store.close()
  }
}

@Suite("Client drop store conformance")
struct ClientDropStoreTests {
  static func line(
    _ report: String, _ reason: String, _ count: Int64, device: String, service: String = "", app: String = "ty",
    appName: String = "Trendyol", at time: Int64
  ) -> StoredClientDrop {
    StoredClientDrop(
      app: app, reportID: report, service: service, reason: reason, count: count, deviceID: device,
      appName: appName, appVersion: "1.0", platform: "iOS", reportedAt: time, receivedAt: time)
  }

  @Test(
    "a report sent again counts once; totals by service and reason, devices counted once", arguments: Engine.available)
  func totals(engine: Engine) async throws {
    let store = try await engine.open()
    let first = [
      Self.line("r1", "disk_budget", 1_100, device: "d1", at: 1_000),
      Self.line("r1", "consent", 4, device: "d1", service: "collector", at: 1_000),
    ]
    _ = try await store.write(StoreBatch(clientDrops: first))
    _ = try await store.write(StoreBatch(clientDrops: first))  // the same report, sent again after a crash
    _ = try await store.write(
      StoreBatch(clientDrops: [
        Self.line("r2", "consent", 100, device: "d2", service: "collector", at: 2_000),
        Self.line("r3", "disk_budget", 7, device: "d3", appName: "Dolap", at: 3_000),
        Self.line("r4", "disk_budget", 9, device: "d4", app: "dl", at: 3_000),
        Self.line("r5", "disk_budget", 50, device: "d5", at: 20_000),
      ]))
    let totals = try await store.clientDrops(app: "ty", from: 0, to: 10_000, appName: nil)
    #expect(
      totals == [
        ClientDropTotal(service: "", reason: "disk_budget", count: 1_107, devices: 2),
        ClientDropTotal(service: "collector", reason: "consent", count: 104, devices: 2),
      ])
    #expect(try await store.clientDropDevices(app: "ty", from: 0, to: 10_000, appName: nil) == 3)
    #expect(
      try await store.clientDrops(app: "ty", from: 0, to: 10_000, appName: "Dolap") == [
        ClientDropTotal(service: "", reason: "disk_budget", count: 7, devices: 1)
      ])
    #expect(try await store.clientDropDevices(app: "ty", from: 1_500, to: 10_000, appName: "Trendyol") == 1)
    try await store.close()
  }
}
