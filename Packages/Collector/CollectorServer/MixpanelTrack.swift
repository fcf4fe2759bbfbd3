import CollectorIngest
import CollectorRuntime
import CollectorStore
import CollectorVendors
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import MixpanelWire

/// Mixpanel's `/track`, as `MixpanelService(mode: .track(token:))` and Mixpanel's device SDKs send
/// it: a JSON array (or one event) of `{"event", "properties"}`, or the same as the form field
/// `data` (JSON or base64 JSON); the write key is each event's `properties.token`.
///
/// Every event is stored or kept in the quarantine with its reason (Mixpanel's own rules,
/// ``MixpanelIngest``; an event whose token is not the first event's is quarantined too), then the
/// answer is Mixpanel's: `1`, or with `verbose=1` `{"status":1,"error":null}`. A request refused
/// whole (no valid token, not JSON) answers `0` / `{"status":0,"error":…}` with its HTTP status.
/// The token is never stored, in the events or in the quarantine.
struct MixpanelTrack: Sendable {
  let collector: EventCollector

  func receive(_ request: Request, _ context: CollectorRequestContext) async throws -> Response {
    let body = try Self.events(request, context.body)
    var entries = try VendorController.mixpanelEntries(body)
    let token = entries.lazy.compactMap { try? $0.get().properties["token"]?.string }.first
    let key = try await collector.authenticate(bodyKey: token, .write)
    entries = entries.map { entry in
      entry.flatMap { event in
        event.properties["token"]?.string == token
          ? .success(event)
          : .failure(MixpanelViolation(field: "properties.token", message: "is not the request's token"))
      }
    }
    _ = try await VendorController(collector: collector).storeMixpanel(
      entries, body: body, key: key, route: "mixpanel_track")
    return Self.answer(status: .ok, error: nil, verbose: request.form.get("verbose") == "1")
  }

  /// The events of the request: its body, or its form field `data` (JSON, or base64 of JSON).
  static func events(_ request: Request, _ body: [UInt8]) throws -> [UInt8] {
    let form = request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false
    guard form else { return body }
    let fields = URLComponents(
      string: "?" + String(decoding: body, as: UTF8.self).replacingOccurrences(of: "+", with: " "))
    guard let data = fields?.queryItems?.first(where: { $0.name == "data" })?.value else {
      throw Refusal(.badRequest, "data", "is required (the events as JSON, or base64 of JSON)")
    }
    if let first = data.first(where: { !$0.isWhitespace }), first == "[" || first == "{" { return Array(data.utf8) }
    guard let decoded = Data(base64Encoded: data, options: .ignoreUnknownCharacters) else {
      throw Refusal(.badRequest, "data", "is neither JSON nor base64 of JSON")
    }
    return Array(decoded)
  }

  /// Mixpanel's answer: `1`/`0`, or `{"status":…,"error":…}` when verbose.
  static func answer(status: HTTPResponse.Status, error: String?, verbose: Bool) -> Response {
    let ok = error == nil
    guard verbose else { return Response.json(status, Array((ok ? "1" : "0").utf8)) }
    var json = JSONWriter(capacity: 64)
    json.beginObject()
    json.member("status", ok ? 1 : 0)
    json.key("error")
    if let error { json.string(error) } else { json.raw(Array("null".utf8)) }
    json.endObject()
    return Response.json(status, json.bytes)
  }
}
