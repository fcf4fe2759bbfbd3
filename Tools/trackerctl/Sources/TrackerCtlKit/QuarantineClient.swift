public import CollectorReports
public import CollectorStore
public import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The collector's quarantine API (`/v1/quarantine`) from the terminal: list, count, replay, purge.
///
/// A replay runs in the collector, under its configuration: raise a limit there, restart, then
/// replay (Docs/Collector.md, "The quarantine").
public struct QuarantineClient: Sendable {
  /// The collector's base URL.
  public var base: URL
  /// A read key (list, count) or an admin key (replay, purge).
  public var key: String

  /// A client.
  public init(base: URL, key: String) {
    self.base = base
    self.key = key
  }

  /// Held entries (and replayed ones with `replayed`), newest first.
  public func list(app: String?, limit: Int, replayed: Bool = false) async throws -> [QuarantinedEntry] {
    let data = try await call(
      "GET", "v1/quarantine", ["app": app, "limit": String(limit), "replayed": replayed ? "true" : nil])
    return try JSONDecoder().decode(Listed.self, from: data).entries
  }

  /// Held entries counted by app, route and reason, as a table.
  public func counts(app: String?) async throws -> ReportTable {
    let data = try await call("GET", "v1/quarantine/counts", ["app": app])
    let rows = try JSONDecoder().decode(Counted.self, from: data).counts
    return ReportTable(
      columns: ["app", "route", "reason", "entries"],
      rows: rows.map { [$0.app, $0.route, $0.reason, String($0.count)] })
  }

  /// Replays held entries of `app` (all apps when `nil`): how many were stored and how many kept.
  public func replay(app: String?) async throws -> (stored: Int, kept: Int) {
    let report = try JSONDecoder().decode(
      Replayed.self, from: try await call("POST", "v1/quarantine/replay", ["app": app]))
    return (report.stored, report.kept)
  }

  /// Deletes entries of `app` that arrived before `before` (a day, an ISO 8601 time or ms).
  public func purge(app: String?, before: String) async throws -> Int {
    let data = try await call("DELETE", "v1/quarantine", ["app": app, "before": before])
    return try JSONDecoder().decode(Purged.self, from: data).deleted
  }

  /// Entries as a table: when, app, route, id, reasons.
  public static func table(_ entries: [QuarantinedEntry]) -> ReportTable {
    ReportTable(
      columns: ["received", "app", "route", "id", "reasons", "replayed"],
      rows: entries.map {
        [
          ReportTime.iso($0.receivedAt), $0.app, $0.route, $0.id, $0.reasons.joined(separator: "; "),
          $0.replayedAt.map(ReportTime.iso) ?? "",
        ]
      })
  }

  func call(_ method: String, _ path: String, _ parameters: [String: String?]) async throws -> Data {
    var components = URLComponents(url: base.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
    components.percentEncodedQuery = QueryText.encode(parameters.compactMapValues { $0 })
    var request = URLRequest(url: components.url!)
    request.httpMethod = method
    request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
    return try await exchange(request)
  }

  private struct Listed: Decodable { var entries: [QuarantinedEntry] }
  private struct Counted: Decodable {
    struct Row: Decodable {
      var app: String
      var route: String
      var reason: String
      var count: Int
    }
    var counts: [Row]
  }
  private struct Replayed: Decodable {
    var stored: Int
    var kept: Int
  }
  private struct Purged: Decodable { var deleted: Int }
}

/// A query string as forms write it, every character outside the unreserved set percent-encoded
/// (`+` as `%2B`, so the collector, which reads `+` as a space, gets a plus).
public enum QueryText {
  /// `key=value&…`, keys sorted.
  public static func encode(_ parameters: [String: String]) -> String? {
    guard !parameters.isEmpty else { return nil }
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return parameters.sorted { $0.key < $1.key }.map { key, value in
      (key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key) + "="
        + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)
    }.joined(separator: "&")
  }
}
