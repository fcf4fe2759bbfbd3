import CollectorIngest
import CollectorWire
import WireJSON

/// What one Segment call must hold (Segment's HTTP API reference): a known `type`, a `userId` or an
/// `anonymousId` (an `alias` both `previousId` and `userId`), an `event` for a `track`, a `groupId`
/// for a `group`, objects for `properties` and `traits`, ISO 8601 times. Each check names the field.
struct SegmentCallRules {
  let message: JSONObject
  /// The call the route names (`/v1/track`), or `nil` in a batch, where `type` says.
  let call: SegmentCall?

  func type() throws(FieldError) -> SegmentCall {
    if let call { return call }
    guard let text = message["type"]?.string, let type = SegmentCall(rawValue: text) else {
      let names = SegmentCall.allCases.map(\.rawValue).joined(separator: ", ")
      throw FieldError(field: "type", reason: "must be one of \(names)")
    }
    return type
  }

  /// The device and the user the call is stored under.
  func identities(_ type: SegmentCall) throws(FieldError) -> (device: String, user: String?) {
    let user = try identifier("userId")
    let anonymous = try identifier("anonymousId")
    if type == .alias {
      guard let previous = try identifier("previousId") else {
        throw FieldError(field: "previousId", reason: "is required for an alias call")
      }
      guard let user else { throw FieldError(field: "userId", reason: "is required for an alias call") }
      return (anonymous ?? previous, user)
    }
    guard let device = anonymous ?? user else {
      throw FieldError(field: "userId", reason: "or anonymousId is required")
    }
    return (device, user)
  }

  func name(_ type: SegmentCall) throws(FieldError) -> String {
    if type == .track, let value = message["event"], value.string == nil {
      throw FieldError(field: "event", reason: "must be a string")
    }
    if type == .screen || type == .page, let value = message["name"], value.string == nil, value != .null {
      throw FieldError(field: "name", reason: "must be a string")
    }
    guard let name = type.name(of: message) else {
      throw FieldError(field: "event", reason: "is required for a track call")
    }
    return name
  }

  func parameters(_ type: SegmentCall) throws(FieldError) -> JSONObject {
    switch type {
    case .track, .screen, .page:
      return try object("properties") ?? [:]
    case .identify:
      return try object("traits") ?? [:]
    case .group:
      guard let group = try identifier("groupId") else {
        throw FieldError(field: "groupId", reason: "is required for a group call")
      }
      var fields = [JSONField(key: "groupId", value: .string(group))]
      if let traits = try object("traits") { fields.append(JSONField(key: "traits", value: .object(traits))) }
      return JSONObject(fields)
    case .alias:
      return ["previousId": .string(try identifier("previousId") ?? "")]
    }
  }

  /// When the call happened by the device's clock (`originalTimestamp`, else `timestamp`; the
  /// arrival when neither is sent), and the offset written in it.
  func time(receivedAt: Int64) throws(FieldError) -> (Int64, Int?) {
    for field in ["originalTimestamp", "timestamp"] {
      guard let value = message[field], value != .null else { continue }
      guard let text = value.string, let time = ISO8601Timestamp.parse(text) else {
        throw FieldError(field: field, reason: ISO8601Timestamp.rule)
      }
      return (time.milliseconds, time.offsetMinutes)
    }
    return (receivedAt, nil)
  }

  /// When the device sent it (the call's `sentAt`, else the batch's), for the clock-skew correction.
  func sentAt(batch: Int64?) throws(FieldError) -> Int64? {
    guard let value = message["sentAt"], value != .null else { return batch }
    return try Self.sentAt(value, field: "sentAt")
  }

  /// A `sentAt` value in milliseconds, or the error naming `field`.
  static func sentAt(_ value: JSONValue, field: String) throws(FieldError) -> Int64 {
    guard let text = value.string, let time = ISO8601Timestamp.parse(text) else {
      throw FieldError(field: field, reason: ISO8601Timestamp.rule)
    }
    return time.milliseconds
  }

  /// A string or a whole number, as text; `nil` when absent, `null` or empty.
  private func identifier(_ field: String) throws(FieldError) -> String? {
    switch message[field] {
    case nil, .null?: return nil
    case .string(let text)?: return text.isEmpty ? nil : text
    case .int(let number)?: return String(number)
    default: throw FieldError(field: field, reason: "must be a string")
    }
  }

  private func object(_ field: String) throws(FieldError) -> JSONObject? {
    switch message[field] {
    case nil, .null?: return nil
    case .object(let object)?: return object
    default: throw FieldError(field: field, reason: "must be an object")
    }
  }
}

extension JSONValue {
  /// The object this value is, if it is one.
  var object: JSONObject? {
    if case .object(let object) = self { return object }
    return nil
  }
}

extension JSONObject {
  /// The object as compact JSON, keys in their order.
  var json: [UInt8] { JSONValue.object(self).json }
}
