import Foundation

/// What `track` journals of an event, read from it before the queue's lock is taken.
struct JournalEntry {
  let name: String
  let kind: EventKind
  let parameters: EventParameters
  let services: ServiceSelection
  let payloads: [(ServiceID, ServicePayload)]

  init(_ event: some CoreTrackable, serviceIDs: [ServiceID]) {
    name = event.name
    kind = event.kind
    parameters = event.parameters
    services = event.services
    var payloads: [(ServiceID, ServicePayload)] = []
    for service in serviceIDs where services.contains(service) {
      if let payload = event.payload(for: service) { payloads.append((service, payload)) }
    }
    self.payloads = payloads
  }
}

extension JournalWriter {
  /// A tracked event: its id and time, then what the worker needs to process it again.
  mutating func track(_ entry: JournalEntry, id: EventID, at timestamp: Date, privacy: PrivacyStage) {
    byte(JournalFormat.Record.track.rawValue)
    u64(id.high)
    u64(id.low)
    double(timestamp.timeIntervalSince1970)
    byte(JournalFormat.kindCode(entry.kind))
    string(entry.name)
    selection(entry.services)
    parameters(entry.parameters, privacy: privacy)
    u32(UInt32(entry.payloads.count))
    for (service, payload) in entry.payloads {
      string(service.rawValue)
      string(payload.name)
      parameters(payload.parameters, privacy: privacy)
    }
  }

  /// A command that changes what later events carry. Returns `false` for those the journal does
  /// not keep: barriers and counters (an increment replayed after its delivery would count twice),
  /// and personal user properties and default parameters (never on disk; see ``TrackerJournal``).
  mutating func command(_ command: EventQueue.Command, privacy: PrivacyStage) -> Bool {
    switch command {
    case .identify(let userID):
      byte(JournalFormat.Record.identify.rawValue)
      optionalString(userID)
    case .userProperty(let key, let value), .defaultParameter(let key, let value):
      if privacy.personalKeys.contains(key) { return false }
      if case .userProperty = command {
        byte(JournalFormat.Record.userProperty.rawValue)
      } else {
        byte(JournalFormat.Record.defaultParameter.rawValue)
      }
      string(key)
      if let value { self.value(value, privacy: privacy, depth: 0) } else { byte(JournalFormat.Tag.absent.rawValue) }
    case .consent(let consent):
      byte(JournalFormat.Record.consent.rawValue)
      byte(consent.isOptedOut ? 1 : 0)
      serviceSet(consent.deniedServices)
    case .endSession(let id):
      byte(JournalFormat.Record.endSession.rawValue)
      u64(id.high)
      u64(id.low)
    case .startTimer(let name, let date):
      byte(JournalFormat.Record.startTimer.rawValue)
      string(name)
      double(date.timeIntervalSince1970)
    case .reset(let anonymousID, let id):
      byte(JournalFormat.Record.reset.rawValue)
      string(anonymousID)
      u64(id.high)
      u64(id.low)
    case .track, .replayed, .journaled, .count, .barrier:
      return false
    }
    return true
  }

  mutating func optionalString(_ text: String?) {
    byte(text == nil ? 0 : 1)
    if let text { string(text) }
  }
}

/// Reads journal records back, checking every length, count, tag and depth against the bytes
/// there are: a damaged journal yields an error for its record, never a crash.
struct JournalReader {
  struct Damaged: Error {}

  private let bytes: UnsafeRawBufferPointer
  private var offset = 0

  init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  var isAtEnd: Bool { offset == bytes.count }

  /// The next `count` bytes, as a buffer of their own (one record's body).
  mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
    let start = try take(count)
    return UnsafeRawBufferPointer(rebasing: bytes[start..<start + count])
  }

  private mutating func take(_ count: Int) throws -> Int {
    guard count >= 0, count <= bytes.count - offset else { throw Damaged() }
    defer { offset += count }
    return offset
  }

  mutating func byte() throws -> UInt8 { bytes[try take(1)] }

  mutating func u32() throws -> UInt32 {
    UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(4), as: UInt32.self))
  }

  mutating func u64() throws -> UInt64 {
    UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(8), as: UInt64.self))
  }

  mutating func double() throws -> Double {
    let value = Double(bitPattern: try u64())
    guard value.isFinite else { throw Damaged() }
    return value
  }

  mutating func string() throws -> String {
    let count = Int(try u32())
    let start = try take(count)
    return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]), as: UTF8.self)
  }

  /// A count of items that each take at least `minimum` bytes: larger than the bytes left is damage.
  mutating func count(minimum: Int) throws -> Int {
    let count = Int(try u32())
    guard count <= (bytes.count - offset) / minimum else { throw Damaged() }
    return count
  }

  mutating func parameters(depth: Int = 0) throws -> EventParameters {
    let count = try count(minimum: 5)
    var parameters: [EventParameter] = []
    parameters.reserveCapacity(count)
    for _ in 0..<count {
      let key = try string()
      parameters.append(EventParameter(key: key, value: try value(depth: depth)))
    }
    return EventParameters(parameters)
  }

  mutating func value(depth: Int) throws -> ParameterValue {
    switch JournalFormat.Tag(rawValue: try byte()) {
    case .string: return .string(try string())
    case .int: return .int(Int(truncatingIfNeeded: Int64(bitPattern: try u64())))
    case .double: return .double(Double(bitPattern: try u64()))
    case .bool: return .bool(try byte() != 0)
    case .date: return .date(Date(timeIntervalSince1970: try double()))
    case .list:
      guard depth < JournalFormat.maximumDepth else { throw Damaged() }
      let count = try count(minimum: 1)
      var values: [ParameterValue] = []
      values.reserveCapacity(count)
      for _ in 0..<count { values.append(try value(depth: depth + 1)) }
      return .list(values)
    case .object:
      guard depth < JournalFormat.maximumDepth else { throw Damaged() }
      return .object(try parameters(depth: depth + 1))
    default:
      throw Damaged()
    }
  }

  mutating func serviceSet() throws -> Set<ServiceID> {
    let count = try count(minimum: 4)
    var services = Set<ServiceID>()
    for _ in 0..<count { services.insert(ServiceID(try string())) }
    return services
  }

  mutating func selection() throws -> ServiceSelection {
    switch try byte() {
    case 0: return .all
    case 1: return .only(try serviceSet())
    case 2: return .allExcept(try serviceSet())
    default: throw Damaged()
    }
  }

  /// One record's body as the command the worker handles.
  mutating func command() throws -> EventQueue.Command {
    switch JournalFormat.Record(rawValue: try byte()) {
    case .track: return try replayedEvent()
    case .identify: return .identify(try byte() == 0 ? nil : try string())
    case .userProperty: return .userProperty(try string(), try optionalValue())
    case .defaultParameter: return .defaultParameter(try string(), try optionalValue())
    case .consent:
      let optedOut = try byte() != 0
      return .consent(Consent(isOptedOut: optedOut, deniedServices: try serviceSet()))
    case .endSession: return .endSession(EventID(high: try u64(), low: try u64()))
    case .startTimer: return .startTimer(try string(), Date(timeIntervalSince1970: try double()))
    case .reset: return .reset(try string(), EventID(high: try u64(), low: try u64()))
    default: throw Damaged()
    }
  }

  private mutating func optionalValue() throws -> ParameterValue? {
    if bytes.count > offset, bytes[offset] == JournalFormat.Tag.absent.rawValue {
      offset += 1
      return nil
    }
    return try value(depth: 0)
  }

  private mutating func replayedEvent() throws -> EventQueue.Command {
    let id = EventID(high: try u64(), low: try u64())
    let timestamp = Date(timeIntervalSince1970: try double())
    guard let kind = JournalFormat.kind(try byte()) else { throw Damaged() }
    let name = try string()
    let services = try selection()
    let uniform = try parameters()
    let payloadCount = try count(minimum: 12)
    var payloads: [ServiceID: ServicePayload] = [:]
    for _ in 0..<payloadCount {
      let service = ServiceID(try string())
      payloads[service] = ServicePayload(name: try string(), parameters: try parameters())
    }
    let event = GenericEvent(name, kind: kind, parameters: uniform, services: services, payloads: payloads)
    return .replayed(event, timestamp, id)
  }
}
