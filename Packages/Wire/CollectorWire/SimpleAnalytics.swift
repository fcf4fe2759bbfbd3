/// The SimpleAnalytics payload exactly as its client sends it: one JSON object per `POST`, the
/// context once at the top level. (The collector's decoder, ``SimpleAnalyticsDecoder``, also
/// accepts the context per entry, where per entry wins; its client never sends it so.)
public struct SimpleAnalyticsPayload: Codable, Sendable, Hashable {
  /// Chosen by the app; may be empty.
  public var deviceID: String?
  /// The app's name.
  public var appName: String?
  /// The build number (CFBundleVersion); may be empty.
  public var appVersion: String?
  /// E.g. `17.4.1`.
  public var systemVersion: String?
  /// `macOS`, `iOS (iPhone)`, `iOS (iPad)` or an override.
  public var platform: String?
  /// Always present, may be empty.
  public var items: [SimpleAnalyticsItem]
  /// Always present, may be empty.
  public var counters: [SimpleAnalyticsCounter]

  enum CodingKeys: String, CodingKey {
    case deviceID = "device_id"
    case appName = "app_name"
    case appVersion = "app_version"
    case systemVersion = "system_version"
    case platform, items, counters
  }

  /// Creates a payload.
  public init(
    deviceID: String?,
    appName: String?,
    appVersion: String?,
    systemVersion: String?,
    platform: String?,
    items: [SimpleAnalyticsItem],
    counters: [SimpleAnalyticsCounter]
  ) {
    self.deviceID = deviceID
    self.appName = appName
    self.appVersion = appVersion
    self.systemVersion = systemVersion
    self.platform = platform
    self.items = items
    self.counters = counters
  }
}

/// One tracked item.
public struct SimpleAnalyticsItem: Codable, Sendable, Hashable {
  /// The action's free text.
  public var description: String
  /// ISO 8601 with the device's local offset, e.g. `2023-03-22T10:15:30-07:00`.
  public var timestamp: String
  /// Left out when there are none.
  public var parameters: [String: String]?

  /// Creates an item.
  public init(description: String, timestamp: String, parameters: [String: String]? = nil) {
    self.description = description
    self.timestamp = timestamp
    self.parameters = parameters
  }
}

/// One counter: the count since the last successful submit.
public struct SimpleAnalyticsCounter: Codable, Sendable, Hashable {
  /// The counter's name.
  public var name: String
  /// The count since the last successful submit.
  public var count: Int
  /// ISO 8601, the time of the first count in this batch.
  public var timestamp: String

  /// Creates a counter entry.
  public init(name: String, count: Int, timestamp: String) {
    self.name = name
    self.count = count
    self.timestamp = timestamp
  }
}

/// The server's answer: `{"message": "..."}`. The client treats any 2xx as success.
public struct SimpleAnalyticsResponse: Codable, Sendable, Hashable {
  /// Free text.
  public var message: String
  /// Creates a response.
  public init(message: String) { self.message = message }
}
