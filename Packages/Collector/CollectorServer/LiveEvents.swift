import CollectorReports
import CollectorRuntime
import CollectorStore
import CollectorWire
import Foundation

/// One line of the live page: an event as it was stored, an entry the collector refused and kept in
/// the quarantine (with its reasons), or events a device reported dropping.
struct LiveItem: Sendable, Hashable, Encodable {
  /// `event`, `quarantined` or `drop`.
  var kind: String
  /// When the collector received it (ISO 8601, UTC).
  var time: String
  /// The app (without its environment).
  var app: String
  /// The environment it is stored in; empty for a quarantined entry whose key names none (its
  /// environment is read from its body when it is replayed).
  var environment: String
  /// The event's name, the quarantined entry's route, or the drop's reason.
  var name: String
  /// The device's anonymous id.
  var device = ""
  /// The platform and app version the event's context names.
  var platform = "", appVersion = ""
  /// The event's parameters (JSON), the quarantined entry (its first 300 characters) or the drop's
  /// count and service.
  var detail = ""
  /// Why the entry was refused (quarantined entries only).
  var reasons: [String] = []

  /// The items of a committed batch (its apps already resolved to their environments).
  static func items(of batch: StoreBatch) -> [LiveItem] {
    var items: [LiveItem] = batch.events.map { event in
      let (app, environment) = AppEnvironment.split(event.app)
      return LiveItem(
        kind: "event", time: ReportTime.iso(event.receivedAt), app: app,
        environment: environment ?? AppEnvironment.production, name: event.name, device: event.deviceID,
        platform: event.context[.platform], appVersion: event.context[.appVersion], detail: event.parametersJSON)
    }
    items += batch.quarantined.map { entry in
      let (app, environment) = AppEnvironment.split(entry.app)
      return LiveItem(
        kind: "quarantined", time: ReportTime.iso(entry.receivedAt), app: app, environment: environment ?? "",
        name: entry.route, detail: String(entry.entry.prefix(300)), reasons: entry.reasons)
    }
    items += batch.clientDrops.map { drop in
      let (app, environment) = AppEnvironment.split(drop.app)
      return LiveItem(
        kind: "drop", time: ReportTime.iso(drop.receivedAt), app: app,
        environment: environment ?? AppEnvironment.production, name: drop.reason, device: drop.deviceID,
        platform: drop.platform, appVersion: drop.appVersion,
        detail: "\(drop.count) dropped" + (drop.service.isEmpty ? "" : " by \(drop.service)"))
    }
    return items
  }
}

/// What one live page watches: an app and environment, and optionally one event name and one
/// device. A quarantined entry cannot always be read, so it is shown when its key's app matches and
/// its text names the event and the device asked for.
struct LiveFilter: Sendable, Hashable {
  var app: String
  var environment = AppEnvironment.production
  var event = ""
  var device = ""

  /// The filter a request's query names (`app`, `environment`, `event`, `device`), checked.
  init(_ query: FormQuery) throws(FieldError) {
    app = query.get("app") ?? ""
    guard !app.isEmpty else { throw FieldError(field: "app", reason: "name the app to watch") }
    environment = query.get("environment").flatMap { $0.isEmpty ? nil : $0 } ?? AppEnvironment.production
    guard AppEnvironment.isName(environment) else {
      throw FieldError(field: "environment", reason: AppEnvironment.nameRule)
    }
    event = query.get("event") ?? ""
    device = query.get("device") ?? ""
  }

  func admits(_ item: LiveItem) -> Bool {
    guard item.app == app else { return false }
    if item.kind == "quarantined" {
      guard item.environment.isEmpty || item.environment == environment else { return false }
      return (event.isEmpty || item.detail.contains("\"\(event)\""))
        && (device.isEmpty || item.detail.contains("\"\(device)\""))
    }
    return item.environment == environment && (event.isEmpty || item.name == event || item.kind == "drop")
      && (device.isEmpty || item.device == device)
  }
}

extension EventCollector {
  /// Hands a committed batch to the live page's watchers (nothing is built when no one watches).
  func publishLive(_ batch: StoreBatch) {
    live.publish { LiveItem.items(of: batch) }
  }
}
