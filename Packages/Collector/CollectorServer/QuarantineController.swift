import CollectorIngest
import CollectorReports
import CollectorRuntime
import CollectorStore
import CollectorVendors
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The quarantine: entries refused by the rules, kept to be seen, fixed and replayed.
///
/// - `GET /v1/quarantine?app=&limit=&replayed=true` (read key): the entries, newest first.
/// - `GET /v1/quarantine/counts?app=` (read key): how many are held, by app, route and reason.
/// - `POST /v1/quarantine/replay?app=&limit=` (admin): reads every held entry again under today's
///   rules and configuration; stores those that pass (once, however often a replay runs or is cut
///   short) and keeps the rest with their new reasons.
/// - `DELETE /v1/quarantine?app=&before=` (admin): deletes entries that arrived before `before`.
///
/// Replays and purges are admin actions, in the audit trail.
struct QuarantineController: Sendable {
  let collector: EventCollector

  func register(on router: some RouterMethods<CollectorRequestContext>) {
    let reading = router.behind(collector.surface("quarantine"), collector.keys(.read, from: .bearer, sessions: true))
    reading.get("/v1/quarantine") { request, _ in try await self.list(request) }
    reading.get("/v1/quarantine/counts") { request, _ in try await self.counts(request) }
    let changing = router.behind(
      collector.surface("quarantine"), collector.keys(.admin, from: .bearer, sessions: true))
    changing.post("/v1/quarantine/replay") { request, context in
      try await self.replay(request, by: context.authenticatedKey())
    }
    changing.delete("/v1/quarantine") { request, context in
      try await self.purge(request, by: context.authenticatedKey())
    }
  }

  func list(_ request: Request) async throws -> Response {
    let query = request.form
    let limit = try Self.limit(query)
    let entries = try await stored {
      try await collector.store.quarantined(
        app: try Self.app(query), limit: limit, includeReplayed: query.get("replayed") == "true")
    }
    return .json(.ok, Self.json(["entries": entries]))
  }

  func counts(_ request: Request) async throws -> Response {
    let entries = try await stored {
      try await collector.store.quarantined(app: try Self.app(request.form), limit: 100_000, includeReplayed: false)
    }
    return .json(.ok, Self.json(["counts": QuarantineCounts(entries).rows]))
  }

  func replay(_ request: Request, by key: KeyRecord) async throws -> Response {
    let query = request.form
    return .json(.ok, Self.json(try await replay(app: try Self.app(query), limit: try Self.limit(query), by: key)))
  }

  /// Replays up to `limit` held entries of `app` (every app when `nil`), oldest first, and records
  /// the replay in the audit trail.
  func replay(app: String?, limit: Int = 10_000, by key: KeyRecord) async throws -> ReplayReport {
    if let app { try ReportText.check(app, field: "app") }
    let entries = try await stored {
      try await collector.store.quarantined(app: app, limit: limit, includeReplayed: false)
    }
    var report = ReplayReport()
    for entry in entries.reversed() {
      switch Self.outcome(of: entry, policy: collector.policy) {
      case .stored(let rows):
        let resolved = rows.environmentsResolved
        try await collector.committer.commit(resolved)
        collector.publishLive(resolved)
        try await stored {
          try await collector.store.resolveQuarantined(
            id: entry.id, replayedAt: EventCollector.now(), reasons: entry.reasons)
        }
        report.stored += 1
      case .refused(let reasons):
        try await stored {
          try await collector.store.resolveQuarantined(id: entry.id, replayedAt: nil, reasons: reasons)
        }
        report.kept += 1
      }
    }
    await collector.audited(
      key, "quarantine-replay", "app \(app ?? "*"): \(report.stored) stored, \(report.kept) still refused")
    return report
  }

  func purge(_ request: Request, by key: KeyRecord) async throws -> Response {
    let query = request.form
    guard let text = query.get("before"), let before = ReportTime.parse(text) else {
      throw Refusal(.badRequest, "before", "is required: a day such as 2026-11-01, an ISO 8601 time or ms")
    }
    let app = try Self.app(query)
    let deleted = try await stored { try await collector.store.purgeQuarantine(app: app, before: before) }
    await collector.audited(key, "quarantine-purge", "app \(app ?? "*"), before \(ReportTime.iso(before)): \(deleted)")
    return .json(.ok, Self.json(["deleted": Int(deleted)]))
  }

  /// What today's rules make of `entry`.
  static func outcome(of entry: QuarantinedEntry, policy: IngestPolicy) -> ReplayOutcome {
    guard !entry.isTruncated else {
      return .refused(entry.reasons + ["entry: cut at \(QuarantinedEntry.maximumEntryBytes) bytes; cannot be replayed"])
    }
    switch entry.route {
    case NativeQuarantine.route: return NativeQuarantine.replay(entry, policy: policy)
    case SimpleAnalyticsSubmissions.route: return SimpleAnalyticsSubmissions.replay(entry, policy: policy)
    case GA4Quarantine.route: return GA4Quarantine.replay(entry, policy: policy)
    case MixpanelQuarantine.route: return MixpanelQuarantine.replay(entry, policy: policy)
    case SegmentIngest.route: return SegmentIngest.replay(entry, policy: policy)
    default: return .refused(entry.reasons)
    }
  }

  /// What a replay did.
  struct ReplayReport: Codable {
    var stored = 0
    var kept = 0
  }

  private func stored<T>(_ work: () async throws -> T) async throws -> T {
    try await collector.storing("quarantine: the store", work)
  }

  private static func app(_ query: FormQuery) throws -> String? {
    guard let app = query.get("app"), !app.isEmpty else { return nil }
    try ReportText.check(app, field: "app")
    return app
  }

  private static func limit(_ query: FormQuery) throws -> Int {
    guard let text = query.get("limit") else { return 10_000 }
    guard let limit = Int(text), (1...100_000).contains(limit) else {
      throw Refusal(.badRequest, "limit", "is a whole number in 1...100000")
    }
    return limit
  }

  static func json(_ value: some Encodable) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
  }
}

/// Held entries counted by app, route and reason (the part of a reason before its first `:`, the
/// field, is kept with the rule: `items[3].description: must be at most 1024 bytes` counts as
/// `description: must be at most 1024 bytes`).
struct QuarantineCounts {
  struct Row: Codable, Hashable {
    var app: String
    var route: String
    var reason: String
    var count: Int
  }

  let rows: [Row]

  init(_ entries: [QuarantinedEntry]) {
    var counts: [Row: Int] = [:]
    for entry in entries {
      for reason in Set(entry.reasons.map(Self.general)) {
        counts[Row(app: entry.app, route: entry.route, reason: reason, count: 0), default: 0] += 1
      }
    }
    rows = counts.map { key, count in Row(app: key.app, route: key.route, reason: key.reason, count: count) }
      .sorted { ($0.count, $1.app, $1.route, $1.reason) > ($1.count, $0.app, $0.route, $0.reason) }
  }

  /// A reason without positions: `items[3].description` → `description`.
  static func general(_ reason: String) -> String {
    let parts = reason.split(separator: ":", maxSplits: 1)
    guard parts.count == 2 else { return reason }
    let field = parts[0].split(separator: ".").last.map(String.init) ?? String(parts[0])
    let cleaned = field.replacingOccurrences(of: #"\[\d+\]"#, with: "", options: .regularExpression)
    return cleaned + ":" + parts[1]
  }
}
