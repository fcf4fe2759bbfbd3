public import Foundation

/// Which one place `trackerctl` was told to read, checked before anything is opened or sent: one of
/// `--url`, `--sqlite`, `--postgres-url` and `--clickhouse-url` (two are a usage error, never a silent
/// pick), and a URL that is `http` or `https` with a host (an `ftp://` URL, or text that is no URL,
/// is refused with the form expected rather than tried).
public enum OriginChoice: Equatable, Sendable {
  /// A running collector at `base`.
  case collector(base: URL)
  /// A store opened directly (the options name which).
  case store
  /// No place was given.
  case none

  /// The choice among the options given (`nil` when not given); `url` may come from `TRACKERCTL_URL`.
  public static func choose(url: String?, sqlite: String?, postgresURL: String?, clickhouseURL: String?)
    throws(CommandError) -> OriginChoice
  {
    let given = [
      ("--url", url), ("--sqlite", sqlite), ("--postgres-url", postgresURL), ("--clickhouse-url", clickhouseURL),
    ]
    .filter { $0.1 != nil }.map(\.0)
    guard given.count <= 1 else {
      throw CommandError("give one place to read, not \(given.joined(separator: " and "))")
    }
    if sqlite != nil || postgresURL != nil { return .store }
    if let clickhouseURL {
      _ = try httpURL(clickhouseURL, option: "--clickhouse-url")
      return .store
    }
    guard let url else { return .none }
    return .collector(base: try httpURL(url, option: "--url"))
  }

  /// `text` as an `http` or `https` URL with a host.
  public static func httpURL(_ text: String, option: String) throws(CommandError) -> URL {
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
      let host = url.host, !host.isEmpty
    else {
      throw CommandError("\(option) must be an http:// or https:// URL with a host, such as http://127.0.0.1:8080")
    }
    return url
  }
}
