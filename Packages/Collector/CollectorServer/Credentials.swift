import Foundation
import Hummingbird

/// The key a request presents, read by one set of rules on every route.
///
/// - `Authorization: Bearer <key>` (the native API, reports, erasure);
/// - `Authorization: Basic base64(user:password)`: the key is the password, or the user name when
///   the password is empty (Mixpanel's project token as the user, a service account's secret as
///   the password; a browser's sign-in prompt).
enum Credentials {
  /// The bearer token, trimmed.
  static func bearer(_ request: Request) -> String? {
    guard let header = request.headers[.authorization] else { return nil }
    let prefix = "Bearer "
    guard header.count > prefix.count, header.prefix(prefix.count).lowercased() == prefix.lowercased() else {
      return nil
    }
    return String(header.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
  }

  /// The key in a Basic header, by the rule above.
  static func basic(_ request: Request) -> String? {
    guard let header = request.headers[.authorization], header.lowercased().hasPrefix("basic "),
      let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces))
    else { return nil }
    let text = String(decoding: decoded, as: UTF8.self)
    let user = text.prefix(while: { $0 != ":" })
    let password = text.dropFirst(user.count + 1)
    return password.isEmpty ? String(user) : String(password)
  }
}
