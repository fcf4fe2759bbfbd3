import Foundation

extension Consent {
  /// What both allow: opted out if either is, every service either denies denied.
  func intersection(_ other: Consent) -> Consent {
    Consent(isOptedOut: isOptedOut || other.isOptedOut, deniedServices: deniedServices.union(other.deniedServices))
  }
}

/// The consent a user last gave, kept in the journal's folder (`consent.json`) so that it holds
/// across restarts, and for every process sharing the folder (an app and its extensions).
enum ConsentFile {
  static let name = "consent.json"

  /// The stored consent, or `nil` when none was stored (or it cannot be read).
  static func load(from directory: URL) -> Consent? {
    guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)) else { return nil }
    return try? JSONDecoder().decode(Consent.self, from: data)
  }

  /// Stores `consent`, whole or not at all (written aside, then renamed into place).
  static func save(_ consent: Consent, in directory: URL) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    guard let data = try? encoder.encode(consent) else { return }
    try? data.write(to: directory.appendingPathComponent(name), options: .atomic)
  }
}
