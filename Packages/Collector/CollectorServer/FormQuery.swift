import CollectorReports
import CollectorWire
import Foundation
import Hummingbird

/// A query string decoded as browsers' GET forms and most HTTP clients write it
/// (`application/x-www-form-urlencoded`): `+` and `%20` are both a space, `%2B` is a plus.
///
/// Every route reads its query through this (`request.form`), so `event=Logged+in` and
/// `event=Logged%20in` name the same event in the report API, the dashboard and the ingest routes.
struct FormQuery: Sendable {
  private let pairs: [(key: String, value: Substring)]

  /// Parses a raw (percent-encoded) query; a malformed escape is kept as written.
  init(_ query: String?) {
    guard let query, !query.isEmpty else {
      pairs = []
      return
    }
    pairs = query.split(separator: "&", omittingEmptySubsequences: true).map { part in
      let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      return (Self.decode(pieces[0], plusIsSpace: true), pieces.count > 1 ? pieces[1] : "")
    }
  }

  /// The first value given for `key`, or `nil`.
  func get(_ key: String) -> String? {
    pairs.first { $0.key == key }.map { Self.decode($0.value, plusIsSpace: true) }
  }

  /// Every value given for `key`, in order (a form's repeated fields: `step=a&step=b`).
  func all(_ key: String) -> [String] {
    pairs.filter { $0.key == key }.map { Self.decode($0.value, plusIsSpace: true) }
  }

  /// The first value given for `key` with `+` kept: for access keys, which never hold a space and
  /// which clients (Foundation's `URLComponents` among them) often leave unencoded.
  func secret(_ key: String) -> String? {
    pairs.first { $0.key == key }.map { Self.decode($0.value, plusIsSpace: false) }
  }

  private static func decode(_ text: Substring, plusIsSpace: Bool) -> String {
    let spaced = plusIsSpace ? text.replacingOccurrences(of: "+", with: " ") : String(text)
    return spaced.removingPercentEncoding ?? spaced
  }
}

extension Request {
  /// The query, decoded as a form (``FormQuery``).
  var form: FormQuery { FormQuery(uri.query) }
}

/// Where the sign-in page may send a browser afterwards: a path of this site only.
enum SameSitePath {
  /// `next` when, after the normalisation a browser applies (tabs and line breaks removed, `\` read
  /// as `/`), it is an absolute path of this site; `/` otherwise. `//evil.example`,
  /// `/\evil.example`, `/%09/evil.example` and `https://evil.example` all become `/`.
  static func normalised(_ next: String?) -> String {
    guard let next, next.hasPrefix("/") else { return "/" }
    // Browsers strip these before parsing; a raw or decoded control character has no place here.
    let decoded = next.removingPercentEncoding ?? next
    for text in [next, decoded] {
      if text.contains("\\") || CollectorLimits.hasControlCharacter(text) { return "/" }
      if text.hasPrefix("//") { return "/" }
    }
    return next
  }
}
