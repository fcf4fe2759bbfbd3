import CollectorWire
import Foundation
import WireJSON

/// The six calls of Segment's Tracking API (its HTTP API, analytics-swift, analytics.js,
/// analytics-kotlin), each stored as one event in the native vocabulary:
///
/// | call | event name | kind | parameters |
/// | --- | --- | --- | --- |
/// | `track` | `event` | `event` | `properties` |
/// | `screen` | `name` (else `screen`) | `screen_view` | `properties` |
/// | `page` | `name` (else `page`) | `page_view` | `properties` |
/// | `identify` | `identify` | `identify` | `traits` |
/// | `group` | `group` | `group` | `{"groupId": …, "traits": {…}}` |
/// | `alias` | `alias` | `alias` | `{"previousId": …}` |
public enum SegmentCall: String, CaseIterable, Sendable, Hashable {
  /// An action the user took.
  case track
  /// A screen of a mobile app came into view.
  case screen
  /// A web page was viewed.
  case page
  /// Who the user is, and their traits.
  case identify
  /// The account or organisation the user belongs to.
  case group
  /// An earlier identity (`previousId`) is the same person as `userId`.
  case alias

  /// The stored event's kind.
  var kind: String {
    switch self {
    case .track: "event"
    case .screen: "screen_view"
    case .page: "page_view"
    case .identify, .group, .alias: rawValue
    }
  }

  /// The stored event's name for `message`, or `nil` when a `track` has no `event`.
  func name(of message: JSONObject) -> String? {
    switch self {
    case .track: message["event"]?.string
    case .screen, .page: message["name"]?.string ?? rawValue
    case .identify, .group, .alias: rawValue
    }
  }

  /// The field of the message a rule on the stored event's `field` is about (`parameters.price` →
  /// `properties.price`; `name` → `event`).
  func messageField(_ field: String) -> String {
    let head = field.prefix { $0 != "." && $0 != "[" }
    let rest = field.dropFirst(head.count)
    switch head {
    case "id": return "messageId"
    case "kind": return "type"
    case "name": return self == .track ? "event" : self == .screen || self == .page ? "name" : "type"
    case "parameters":
      switch self {
      case .track, .screen, .page: return "properties" + rest
      case .identify: return "traits" + rest
      case .group, .alias: return rest.isEmpty ? "" : String(rest.dropFirst())
      }
    default: return field
    }
  }
}

/// Segment's `context` object in this project's ``EventContext``: `app.name`, `app.version`,
/// `app.build`, `os.name` (also the platform; `web` for a browser's call, which has `page` or
/// `userAgent` and no `os`), `os.version`, `device.model`, `locale`, `timezone`, `library.name` and
/// `library.version`. Texts are cut at the collector's 256-byte bound; the rest of the context (IP
/// address, user agent, campaign, screen, network) is not kept.
enum SegmentContext {
  /// The stored context of `context` (the batch's merged under the message's own).
  static func stored(_ context: JSONObject) -> EventContext {
    func text(_ path: String...) -> String {
      var value: JSONValue? = .object(context)
      for key in path { value = value?[key] }
      return bounded(value?.text ?? "")
    }
    let os = text("os", "name")
    let browser = context["page"] != nil || context["userAgent"] != nil
    return EventContext([
      .appName: text("app", "name"), .appVersion: text("app", "version"), .appBuild: text("app", "build"),
      .osName: os, .osVersion: text("os", "version"), .platform: os.isEmpty && browser ? "web" : os,
      .deviceModel: text("device", "model"), .locale: text("locale"), .timeZone: text("timezone"),
      .libraryName: text("library", "name"), .libraryVersion: text("library", "version"),
    ])
  }

  /// `base` with `own`'s members in place of its own (Segment: a batch's context applies to every
  /// call; a call's own context wins).
  static func merged(_ base: JSONObject?, _ own: JSONObject?) -> JSONObject {
    guard let base else { return own ?? [:] }
    guard let own else { return base }
    let keys = Set(own.keys)
    return JSONObject(base.fields.filter { !keys.contains($0.key) } + own.fields)
  }

  /// The UTC offset of `zone` (an IANA name) at `milliseconds`, in minutes; `nil` for an unknown zone.
  static func offset(zone: String, at milliseconds: Int64) -> Int? {
    guard !zone.isEmpty, let timeZone = TimeZone(identifier: zone) else { return nil }
    return timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(milliseconds) / 1000)) / 60
  }

  /// Cut at 256 bytes, on a character boundary, without control characters.
  static func bounded(_ text: String) -> String {
    var value = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
    while value.utf8.count > CollectorLimits.maximumNameBytes { value.removeLast() }
    return value
  }
}
