import Foundation
public import WireJSON

/// One event as `/import` and `/track` take it: `{"event": name, "properties": {...}}`.
public struct MixpanelEvent: Sendable, Hashable, Codable {
  /// The event's name.
  public var event: String
  /// The properties: `distinct_id`, `time`, `$insert_id` (and `token` on `/track`) among them.
  public var properties: JSONObject

  /// An event.
  public init(event: String, properties: JSONObject) {
    self.event = event
    self.properties = properties
  }

  /// `time` in milliseconds (a value under 10^11 is read as seconds, as Mixpanel does); `nil` when
  /// it is missing, not a number, or outside ``MixpanelLimits/validTimeMilliseconds`` (checked before
  /// any arithmetic: `1e300` or `-9e18` cannot overflow).
  public var timeMilliseconds: Int64? {
    let milliseconds: Double
    switch properties["time"] {
    case .int(let time)?:
      guard time >= 0, time <= MixpanelLimits.validTimeMilliseconds.upperBound else { return nil }
      return time < 100_000_000_000 ? time * 1000 : time
    case .double(let time)?:
      guard time.isFinite, time >= 0 else { return nil }
      milliseconds = time < 100_000_000_000 ? (time * 1000).rounded(.down) : time.rounded(.down)
    default:
      return nil
    }
    guard milliseconds <= Double(MixpanelLimits.validTimeMilliseconds.upperBound) else { return nil }
    return Int64(milliseconds)
  }
}

/// Reads the body of an `/import` request: a JSON array of events or NDJSON (one event per line).
public enum MixpanelBody {
  /// The entries of `body`, each an event or why it is not one (by position); throws when the body
  /// is neither a JSON array nor NDJSON.
  public static func decode(_ body: [UInt8]) throws(MixpanelViolation) -> [Result<MixpanelEvent, MixpanelViolation>] {
    if let problem = MixpanelLimits.bodyBounds.problem(in: body) {
      throw MixpanelViolation(field: "", message: "the body \(problem)")
    }
    let decoder = JSONDecoder()
    let trimmed = body.drop(while: { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 })
    if trimmed.first == UInt8(ascii: "[") {
      guard let values = try? decoder.decode([JSONValue].self, from: Data(trimmed)) else {
        throw MixpanelViolation(field: "", message: "the body is not a valid JSON array")
      }
      return values.map(event(from:))
    }
    var entries: [Result<MixpanelEvent, MixpanelViolation>] = []
    for line in lines(of: trimmed) {
      if let value = try? decoder.decode(JSONValue.self, from: Data(line)) {
        entries.append(event(from: value))
      } else {
        entries.append(.failure(MixpanelViolation(field: "", message: "the line is not valid JSON")))
      }
    }
    guard !entries.isEmpty else { throw MixpanelViolation(field: "", message: "the body holds no events") }
    return entries
  }

  /// The lines of an NDJSON body that hold an entry, in order (blank lines and a line's `\r` aside):
  /// entry `i` of ``decode(_:)`` is line `i` here.
  public static func lines(of body: some Collection<UInt8>) -> [[UInt8]] {
    var lines: [[UInt8]] = []
    for line in body.split(separator: 0x0A) where line.contains(where: { $0 != 0x20 && $0 != 0x0D }) {
      lines.append(Array(line))
    }
    return lines
  }

  /// Whether `body` is a JSON array (else NDJSON).
  public static func isArray(_ body: some Collection<UInt8>) -> Bool {
    body.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 } == UInt8(ascii: "[")
  }

  private static func event(from value: JSONValue) -> Result<MixpanelEvent, MixpanelViolation> {
    guard case .object(let fields) = value else {
      return .failure(MixpanelViolation(field: "", message: "an event must be an object"))
    }
    guard case .string(let name) = fields["event"] else {
      return .failure(MixpanelViolation(field: "event", message: "is required and must be a string"))
    }
    guard case .object(let properties) = fields["properties"] ?? .object([:]) else {
      return .failure(MixpanelViolation(field: "properties", message: "must be an object"))
    }
    if let unknown = fields.keys.first(where: { $0 != "event" && $0 != "properties" }) {
      return .failure(MixpanelViolation(field: unknown, message: "is not a field of an event"))
    }
    return .success(MixpanelEvent(event: name, properties: properties))
  }
}

/// The answer of `/import`: `{"code", "num_records_imported", "status"}` and, on a strict-mode 400,
/// `failed_records` listing each refused row.
public struct MixpanelImportResponse: Sendable, Hashable, Codable {
  /// One refused row.
  public struct FailedRecord: Sendable, Hashable, Codable {
    /// Its position in the request.
    public var index: Int
    /// Its `$insert_id`, when it had one (`insert_id` in the answer, as Mixpanel writes it).
    public var insertID: String?
    /// The property or field at fault.
    public var field: String
    /// What is wrong.
    public var message: String

    /// A refused row.
    public init(index: Int, insertID: String?, field: String, message: String) {
      self.index = index
      self.insertID = insertID
      self.field = field
      self.message = message
    }

    enum CodingKeys: String, CodingKey {
      case index, field, message
      case insertID = "insert_id"
    }
  }

  /// The HTTP status repeated.
  public var code: Int
  /// Rows stored.
  public var numRecordsImported: Int
  /// `OK` or `Bad Request`.
  public var status: String
  /// Rows refused (strict mode).
  public var failedRecords: [FailedRecord]?
  /// A request-level error.
  public var error: String?

  /// An answer.
  public init(
    code: Int, numRecordsImported: Int, status: String, failedRecords: [FailedRecord]? = nil, error: String? = nil
  ) {
    self.code = code
    self.numRecordsImported = numRecordsImported
    self.status = status
    self.failedRecords = failedRecords
    self.error = error
  }

  enum CodingKeys: String, CodingKey {
    case code, status, error
    case numRecordsImported = "num_records_imported"
    case failedRecords = "failed_records"
  }
}

/// Every rule of strict mode over one event, as `failed_records` reports it.
public enum MixpanelValidator {
  /// The violations of `event` received at `nowMilliseconds`; `bytes` is its encoded size.
  public static func violations(of event: MixpanelEvent, bytes: Int, nowMilliseconds: Int64) -> [MixpanelViolation] {
    var violations: [MixpanelViolation] = []
    if event.event.isEmpty { violations.append(MixpanelViolation(field: "event", message: "is empty")) }
    if bytes >= MixpanelLimits.eventByteLimit {
      violations.append(
        MixpanelViolation(
          field: "", message: "the event is \(bytes) bytes, under \(MixpanelLimits.eventByteLimit) allowed")
      )
    }
    if let violation = MixpanelRules.checkPropertyCount(event.properties.count) { violations.append(violation) }
    switch event.properties["distinct_id"] {
    case .string(let id):
      if let violation = MixpanelRules.checkDistinctID(id) { violations.append(violation) }
    case .int: break
    default:
      violations.append(MixpanelViolation(field: "properties.distinct_id", message: "is required (a string)"))
    }
    if let time = event.timeMilliseconds {
      if let violation = MixpanelRules.checkTime(time, now: nowMilliseconds) { violations.append(violation) }
    } else if case .int? = event.properties["time"] {
      violations.append(MixpanelViolation(field: "properties.time", message: "is out of range (1971 to 9999)"))
    } else if case .double? = event.properties["time"] {
      violations.append(MixpanelViolation(field: "properties.time", message: "is out of range (1971 to 9999)"))
    } else {
      violations.append(MixpanelViolation(field: "properties.time", message: "is required (seconds or ms)"))
    }
    if case .string(let id) = event.properties["$insert_id"] {
      if let violation = MixpanelRules.checkInsertID(id) { violations.append(violation) }
    } else {
      violations.append(MixpanelViolation(field: "properties.$insert_id", message: "is required in strict mode"))
    }
    return violations
  }
}
