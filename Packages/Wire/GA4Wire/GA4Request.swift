public import WireJSON

/// One element of an ecommerce event's `items`: item parameters by name (`item_id`, `price`, ...).
public typealias GA4Item = [String: GA4Value]

/// A parameter or user property value of the Measurement Protocol: a string, a number, a boolean (as
/// Google's own item example sends `in_stock: true`), or (for the `items` parameter of ecommerce
/// events) a list of items.
public enum GA4Value: Sendable, Hashable, Codable {
  /// A string (at most 100 characters as a parameter value).
  case string(String)
  /// An integer.
  case int(Int64)
  /// A number with a fraction.
  case double(Double)
  /// `true` or `false`.
  case bool(Bool)
  /// The `items` of an ecommerce event (at most 200; see ``GA4Limits/maximumItemsPerEvent``).
  case items([GA4Item])

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let value = try? container.decode(Int64.self) {
      self = .int(value)
    } else if let value = try? container.decode(Double.self) {
      self = .double(value)
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([GA4Item].self) {
      self = .items(value)
    } else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "a value is a string, a number, a boolean or (items) a list of objects")
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .string(let value): try container.encode(value)
    case .int(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .bool(let value): try container.encode(value)
    case .items(let value): try container.encode(value)
    }
  }
}

/// One event of a request: `name`, `params`, and its own `timestamp_micros`.
public struct GA4Event: Sendable, Hashable, Codable {
  /// The event's name.
  public var name: String
  /// The parameters (`session_id` and `engagement_time_msec` among them for sessions to show).
  public var params: [String: GA4Value]
  /// When the event happened (µs since 1970); overrides the request's.
  public var timestampMicros: Int64?

  /// An event.
  public init(name: String, params: [String: GA4Value] = [:], timestampMicros: Int64? = nil) {
    self.name = name
    self.params = params
    self.timestampMicros = timestampMicros
  }

  enum CodingKeys: String, CodingKey {
    case name, params
    case timestampMicros = "timestamp_micros"
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    name = try container.decode(String.self, forKey: .name)
    params = try container.decodeIfPresent([String: GA4Value].self, forKey: .params) ?? [:]
    timestampMicros = try container.decodeIfPresent(Int64.self, forKey: .timestampMicros)
  }
}

/// A user property: its value and, optionally, when it was set.
public struct GA4UserProperty: Sendable, Hashable, Codable {
  /// The value (at most 36 characters).
  public var value: GA4Value
  /// When it was set (µs since 1970).
  public var timestampMicros: Int64?

  /// A user property.
  public init(value: GA4Value, timestampMicros: Int64? = nil) {
    self.value = value
    self.timestampMicros = timestampMicros
  }

  enum CodingKeys: String, CodingKey {
    case value
    case timestampMicros = "timestamp_micros"
  }
}

/// A request's advertising consent: `{"ad_user_data": "GRANTED", "ad_personalization": "DENIED"}`.
///
/// Each field is GA4's text as sent; ``GA4Validator`` checks that it is `GRANTED` or `DENIED`.
public struct GA4Consent: Sendable, Hashable, Codable {
  /// `GRANTED` or `DENIED`.
  public enum Status: String, Sendable, Hashable, Codable, CaseIterable {
    /// Consent given.
    case granted = "GRANTED"
    /// Consent refused.
    case denied = "DENIED"
  }

  /// Whether the user's data may be sent to Google for advertising (`ad_user_data`), as sent.
  public var adUserData: String?
  /// Whether the data may be used for personalised advertising (`ad_personalization`), as sent.
  public var adPersonalization: String?

  /// A consent with each field's status, or `nil` to leave it out.
  public init(adUserData: Status? = nil, adPersonalization: Status? = nil) {
    self.adUserData = adUserData?.rawValue
    self.adPersonalization = adPersonalization?.rawValue
  }

  enum CodingKeys: String, CodingKey {
    case adUserData = "ad_user_data"
    case adPersonalization = "ad_personalization"
  }

  /// The fields given, by their wire names.
  public var fields: [(name: String, value: String)] {
    [("ad_user_data", adUserData), ("ad_personalization", adPersonalization)].compactMap { name, value in
      value.map { (name, $0) }
    }
  }
}

/// The body of `POST /mp/collect` for a Firebase app stream (`app_instance_id`) or a web stream
/// (`client_id`).
///
/// The client service writes it with a fast writer; the collector's `/mp/collect` endpoints read it
/// with this type and check it with ``GA4Validator``.
public struct GA4Request: Sendable, Hashable, Codable {
  /// The device: the app instance, or the web client.
  public var device: String? {
    if let appInstanceID, !appInstanceID.isEmpty { return appInstanceID }
    return clientID.flatMap { $0.isEmpty ? nil : $0 }
  }

  /// The Firebase app instance (app streams; one of it and ``clientID`` is required).
  public var appInstanceID: String?
  /// The browser's client id (web streams, with `measurement_id` in the URL).
  public var clientID: String?
  /// The signed-in user (at most 256 characters).
  public var userID: String?
  /// The request's time (µs since 1970), for events without their own.
  public var timestampMicros: Int64?
  /// User properties by name.
  public var userProperties: [String: GA4UserProperty]
  /// The request's advertising consent (`consent`), when given.
  public var consent: GA4Consent?
  /// The legacy `non_personalized_ads`: `true` says the events must not be used for personalised
  /// ads (what `consent.ad_personalization` `DENIED` says today).
  public var nonPersonalizedAds: Bool?
  /// The events (1 to 25).
  public var events: [GA4Event]

  /// A request.
  public init(
    appInstanceID: String?, clientID: String? = nil, userID: String? = nil, timestampMicros: Int64? = nil,
    userProperties: [String: GA4UserProperty] = [:], consent: GA4Consent? = nil, nonPersonalizedAds: Bool? = nil,
    events: [GA4Event]
  ) {
    self.appInstanceID = appInstanceID
    self.clientID = clientID
    self.userID = userID
    self.timestampMicros = timestampMicros
    self.userProperties = userProperties
    self.consent = consent
    self.nonPersonalizedAds = nonPersonalizedAds
    self.events = events
  }

  enum CodingKeys: String, CodingKey {
    case appInstanceID = "app_instance_id"
    case clientID = "client_id"
    case userID = "user_id"
    case timestampMicros = "timestamp_micros"
    case userProperties = "user_properties"
    case consent
    case nonPersonalizedAds = "non_personalized_ads"
    case events
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    try self.init(fields: container, events: container.decodeIfPresent([GA4Event].self, forKey: .events) ?? [])
  }

  /// The request's fields but its events from `container`, with `events`.
  init(fields container: KeyedDecodingContainer<CodingKeys>, events: [GA4Event]) throws {
    appInstanceID = try container.decodeIfPresent(String.self, forKey: .appInstanceID)
    clientID = try container.decodeIfPresent(String.self, forKey: .clientID)
    userID = try container.decodeIfPresent(String.self, forKey: .userID)
    timestampMicros = try container.decodeIfPresent(Int64.self, forKey: .timestampMicros)
    userProperties = try container.decodeIfPresent([String: GA4UserProperty].self, forKey: .userProperties) ?? [:]
    consent = try container.decodeIfPresent(GA4Consent.self, forKey: .consent)
    nonPersonalizedAds = try container.decodeIfPresent(Bool.self, forKey: .nonPersonalizedAds)
    self.events = events
  }
}

/// A request as a server receives it: an event that does not decode (a boolean or an object where a
/// parameter value goes, a name that is not a string) is set aside with where and why, and the
/// others are read. GA4 answers 2xx whatever a request's events hold; one bad event never takes the
/// valid ones down with it.
public struct GA4ReceivedRequest: Decodable, Sendable {
  /// The request; an event that did not decode stands as an event without a name at its index.
  public var request: GA4Request
  /// The events that did not decode, by index.
  public var undecodable: [Int: DecodingProblem]

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: GA4Request.CodingKeys.self)
    let entries = try container.decodeIfPresent([Entry].self, forKey: .events) ?? []
    request = try GA4Request(fields: container, events: entries.map { $0.event ?? GA4Event(name: "") })
    var undecodable: [Int: DecodingProblem] = [:]
    for (index, entry) in entries.enumerated() { undecodable[index] = entry.problem }
    self.undecodable = undecodable
  }

  /// One element of `events`: the event, or why it is not one.
  private struct Entry: Decodable {
    var event: GA4Event?
    var problem: DecodingProblem?

    init(from decoder: any Decoder) throws {
      do {
        event = try GA4Event(from: decoder)
      } catch {
        problem = DecodingProblem(error)
      }
    }
  }
}

/// The validation endpoint's answer: `{"validationMessages": [...]}`, empty when the request is valid.
public struct GA4ValidationResponse: Sendable, Hashable, Codable {
  /// One message.
  public struct Message: Sendable, Hashable, Codable {
    /// Where (`events[0].params.item_id`).
    public var fieldPath: String
    /// What is wrong.
    public var description: String
    /// The code (`NAME_INVALID`, ...).
    public var validationCode: String

    /// A message.
    public init(fieldPath: String, description: String, validationCode: String) {
      self.fieldPath = fieldPath
      self.description = description
      self.validationCode = validationCode
    }
  }

  /// The messages; empty means valid.
  public var validationMessages: [Message]

  /// An answer listing `violations`.
  public init(_ violations: [GA4Violation]) {
    validationMessages = violations.map {
      Message(fieldPath: $0.fieldPath, description: $0.message, validationCode: $0.code.rawValue)
    }
  }

  /// The messages as typed violations (an unknown code reads as `VALUE_INVALID`).
  public var violations: [GA4Violation] {
    validationMessages.map {
      GA4Violation(
        fieldPath: $0.fieldPath, code: GA4ValidationCode(rawValue: $0.validationCode) ?? .valueInvalid,
        message: $0.description
      )
    }
  }
}

extension GA4Value {
  /// Writes the value as the Measurement Protocol's JSON (what a client sends and the collector
  /// stores): `items` as an array of objects, each with its keys sorted.
  public func write(to json: inout JSONWriter) {
    switch self {
    case .string(let text): json.string(text)
    case .int(let number): json.int(number)
    case .double(let number): json.double(number)
    case .bool(let flag): json.bool(flag)
    case .items(let items):
      json.beginArray()
      for item in items { Self.write(item, to: &json) }
      json.endArray()
    }
  }

  /// Writes parameters (or one item) as a JSON object, its keys sorted.
  public static func write(_ parameters: [String: GA4Value], to json: inout JSONWriter) {
    json.beginObject()
    for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
      json.key(key)
      value.write(to: &json)
    }
    json.endObject()
  }
}
