public import CollectorReports
import CollectorStore
public import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where `trackerctl` reads reports: a running collector over HTTP (with a read or admin key), or a store
/// opened directly (a SQLite file, a PostgreSQL database, a ClickHouse database).
public enum ReportOrigin: Sendable {
  /// `GET <url>/v1/reports/<name>` with `Authorization: Bearer <key>`.
  case http(URL, key: String)
  /// A store read directly.
  case store(any ReportEngine)

  /// The report `name` with `parameters`: its JSON as the API answers it, and its table.
  public func report(_ name: String, parameters: [String: String]) async throws -> (
    json: Data, result: any ReportResult
  ) {
    switch self {
    case .store(let reports):
      let result = try await reports.run(name) { parameters[$0] }
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      return (try encoder.encode(result), result)
    case .http(let url, let key):
      let type = try Report(named: name).resultType
      var components = URLComponents(
        url: url.appendingPathComponent("v1/reports/\(name)"), resolvingAgainstBaseURL: false)!
      // Encoded so that `+` arrives as a plus (URLQueryItem leaves it, and the collector reads a space).
      components.percentEncodedQuery = QueryText.encode(parameters)
      var request = URLRequest(url: components.url!)
      request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
      let (data, response) = try await URLSession.shared.data(for: request)
      let status = (response as? HTTPURLResponse)?.statusCode ?? 0
      guard status == 200 else {
        throw CommandError("the collector answered \(status): \(String(decoding: data.prefix(500), as: UTF8.self))")
      }
      return (data, try JSONDecoder().decode(type, from: data))
    }
  }
}

/// A failure `trackerctl` reports in one line and exits non-zero for.
public struct CommandError: Error, CustomStringConvertible, Sendable {
  /// What went wrong.
  public var description: String

  /// An error.
  public init(_ description: String) { self.description = description }
}
