public import CollectorReports
import CollectorStore
import CollectorWire
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
      let data = try await exchange(request)
      return (data, try JSONDecoder().decode(type, from: data))
    }
  }

  /// The apps with events (at most 1,000, by name) and the report time zone each is configured
  /// with: `GET /v1/apps`, or the store's apps (a store knows no configuration: no zones).
  public func apps() async throws -> (apps: [String], timeZones: [String: String]) {
    switch self {
    case .store(let reports):
      return (AppEnvironment.catalog(try await reports.apps()).map(\.app), [:])
    case .http(let url, let key):
      struct Answer: Decodable {
        var apps: [String]
        var timeZones: [String: String]?
      }
      var request = URLRequest(url: url.appendingPathComponent("v1/apps"))
      request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
      let answer = try JSONDecoder().decode(Answer.self, from: try await exchange(request))
      return (answer.apps, answer.timeZones ?? [:])
    }
  }

  /// The report time zone `app` is configured with (`nil` for a store read directly), after
  /// checking that it has events: a mistyped `--app` is a usage error (exit status 1) naming the
  /// apps there are, not an empty table.
  public func requireEvents(of app: String) async throws -> String? {
    let (apps, zones) = try await apps()
    // Past 1,000 apps the list is cut: an app not in it may still exist.
    guard !apps.contains(app), apps.count < 1_000 else { return zones[app] }
    let known = apps.isEmpty ? "there are no events at all yet" : "apps with events: \(apps.joined(separator: ", "))"
    throw CommandError("--app \(app): no events of that app (\(known))")
  }
}

/// A failure `trackerctl` reports in one line and exits non-zero for: 1 for a usage or local
/// failure, 2 when the collector refused the request, 3 when it could not be reached.
public struct CommandError: Error, CustomStringConvertible, Sendable {
  /// What went wrong.
  public var description: String
  /// The process's exit status for it.
  public var exitCode: Int32

  /// An error (exit status 1 unless told).
  public init(_ description: String, exitCode: Int32 = 1) {
    self.description = description
    self.exitCode = exitCode
  }

  /// The collector answered `status` (exit status 2), with the start of its answer.
  public static func refused(_ status: Int, _ body: Data) -> CommandError {
    CommandError("the collector answered \(status): \(String(decoding: body.prefix(500), as: UTF8.self))", exitCode: 2)
  }

  /// The collector at `url` could not be reached (exit status 3), in words rather than Foundation's.
  public static func unreachable(_ url: URL, _ error: any Error) -> CommandError {
    let place = "\(url.host ?? "?")\(url.port.map { ":\($0)" } ?? "")"
    let why =
      switch (error as? URLError)?.code {
      case .cannotConnectToHost?, .networkConnectionLost?: "nothing answers there (is the collector running?)"
      case .timedOut?: "it did not answer in time"
      case .cannotFindHost?, .dnsLookupFailed?: "the host name is unknown"
      case .secureConnectionFailed?, .serverCertificateUntrusted?: "the TLS connection failed"
      default: "the connection failed"
      }
    return CommandError("cannot reach the collector at \(place): \(why)", exitCode: 3)
  }
}

/// One request to a collector: its answer's body when the status is 2xx, a ``CommandError`` that
/// says refused (2) or unreachable (3) otherwise.
func exchange(_ request: URLRequest) async throws -> Data {
  let data: Data
  let response: URLResponse
  do {
    (data, response) = try await URLSession.shared.data(for: request)
  } catch {
    throw CommandError.unreachable(request.url ?? URL(fileURLWithPath: "/"), error)
  }
  let status = (response as? HTTPURLResponse)?.statusCode ?? 0
  guard (200..<300).contains(status) else { throw CommandError.refused(status, data) }
  return data
}
