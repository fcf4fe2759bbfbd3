/// A client's report of events it dropped, carried in a native batch's `diagnostics` array: which
/// service (none: the tracker itself) dropped how many events for which reason. The collector keeps
/// one report per `id` (a report sent again after a crash is the same report).
///
/// ```json
/// {"id":"6f1c…-3","timestamp":1767225600000,"anonymousId":"a1",
///  "dropped":[{"service":"collector","reason":"disk_budget","count":1100},{"reason":"consent","count":104}]}
/// ```
public struct CollectorDropReport: Codable, Sendable, Hashable {
  /// One service's drops for one reason.
  public struct Dropped: Codable, Sendable, Hashable {
    /// The service (`collector`, `firebase`, …), or `nil` for the tracker's own pipeline.
    public var service: String?
    /// Why (`disk_budget`, `consent`, `sampled_out`, `rejected_by_server`, …).
    public var reason: String
    /// How many events.
    public var count: Int64

    /// Creates an entry.
    public init(service: String?, reason: String, count: Int64) {
      self.service = service
      self.reason = reason
      self.count = count
    }
  }

  /// The report's id: unique per client run and report.
  public var id: String
  /// When the client made the report (ms since 1970, UTC).
  public var timestamp: Int64
  /// The install that dropped the events.
  public var anonymousId: String
  /// The drops.
  public var dropped: [Dropped]

  /// Creates a report.
  public init(id: String, timestamp: Int64, anonymousId: String, dropped: [Dropped]) {
    self.id = id
    self.timestamp = timestamp
    self.anonymousId = anonymousId
    self.dropped = dropped
  }

  /// The longest id, service and reason accepted.
  public static let maximumTextLength = 128
  /// The most entries in one report.
  public static let maximumEntries = 256
}

extension BatchWriter {
  /// One drop report, as the `diagnostics` array of a batch carries it.
  public static func dropReport(_ report: CollectorDropReport) -> [UInt8] {
    var json = JSONWriter(capacity: 96 + report.dropped.count * 64)
    json.beginObject()
    json.member("id", report.id)
    json.member("timestamp", report.timestamp)
    json.member("anonymousId", report.anonymousId)
    json.key("dropped")
    json.beginArray()
    for entry in report.dropped {
      json.beginObject()
      if let service = entry.service {
        json.member("service", service)
      }
      json.member("reason", entry.reason)
      json.member("count", entry.count)
      json.endObject()
    }
    json.endArray()
    json.endObject()
    return json.bytes
  }
}

extension Parser {
  /// One entry of `diagnostics`, checked: a bad report is refused alone (the batch's events stay).
  static func dropReport(_ value: JSONValue, index: Int) throws(FieldError) -> CollectorDropReport {
    let path = "diagnostics[\(index)]"
    guard case .object(let pairs) = value else { throw FieldError(field: path, reason: "must be an object") }
    var id: String?
    var timestamp: Int64?
    var anonymousID: String?
    var dropped: [CollectorDropReport.Dropped]?
    for (key, value) in pairs {
      switch (key, value) {
      case ("id", .string(let text)): id = try checked(text, "\(path).id")
      case ("timestamp", .int(let number)): timestamp = number
      case ("anonymousId", .string(let text)): anonymousID = try checked(text, "\(path).anonymousId")
      case ("dropped", .array(let items)):
        guard items.count <= CollectorDropReport.maximumEntries else {
          throw FieldError(
            field: "\(path).dropped", reason: "holds more than \(CollectorDropReport.maximumEntries) entries")
        }
        dropped = try items.enumerated().map { (index, item) throws(FieldError) in
          try droppedEntry(item, path: "\(path).dropped[\(index)]")
        }
      default:
        throw FieldError(field: "\(path).\(key)", reason: "is not a field of a drop report, or is not \(expected(key))")
      }
    }
    guard let id, let timestamp, let anonymousID, let dropped else {
      let missing =
        [("id", id == nil), ("timestamp", timestamp == nil), ("anonymousId", anonymousID == nil)]
        .first { $0.1 }?.0 ?? "dropped"
      throw FieldError(field: "\(path).\(missing)", reason: "is required")
    }
    return CollectorDropReport(id: id, timestamp: timestamp, anonymousId: anonymousID, dropped: dropped)
  }

  private static func droppedEntry(_ value: JSONValue, path: String) throws(FieldError) -> CollectorDropReport.Dropped {
    guard case .object(let pairs) = value else { throw FieldError(field: path, reason: "must be an object") }
    var service: String?
    var reason: String?
    var count: Int64?
    for (key, value) in pairs {
      switch (key, value) {
      case ("service", .string(let text)): service = try checked(text, "\(path).service")
      case ("service", .null): service = nil
      case ("reason", .string(let text)): reason = try checked(text, "\(path).reason")
      case ("count", .int(let number)):
        guard number > 0, number <= 1_000_000_000_000 else {
          throw FieldError(field: "\(path).count", reason: "must be between 1 and 10^12")
        }
        count = number
      default:
        throw FieldError(field: "\(path).\(key)", reason: "is not a field of a drop, or is not \(expected(key))")
      }
    }
    guard let reason, !reason.isEmpty else { throw FieldError(field: "\(path).reason", reason: "is required") }
    guard let count else { throw FieldError(field: "\(path).count", reason: "is required") }
    return CollectorDropReport.Dropped(service: service, reason: reason, count: count)
  }

  private static func checked(_ text: String, _ field: String) throws(FieldError) -> String {
    guard text.utf8.count <= CollectorDropReport.maximumTextLength else {
      throw FieldError(field: field, reason: "is longer than \(CollectorDropReport.maximumTextLength) bytes")
    }
    return text
  }

  private static func expected(_ key: String) -> String {
    switch key {
    case "timestamp", "count": "an integer"
    case "dropped": "an array"
    default: "a string"
    }
  }
}
