import Foundation

/// Writes one journal record's bytes straight into the mapped journal, on the caller's thread.
///
/// No allocation: strings are copied from their UTF-8 storage, numbers stored little-endian. A
/// record that does not fit in the space left marks the writer ``Outcome/full`` (the journal grows
/// and writes it again); a value nested deeper than ``JournalFormat/maximumDepth`` marks it
/// ``Outcome/unencodable`` (the event is tracked without the journal's protection, and counted).
struct JournalWriter {
  enum Outcome {
    case written, full, unencodable
  }

  private let base: UnsafeMutableRawPointer
  private let limit: Int
  private(set) var offset: Int
  private(set) var outcome = Outcome.written
  /// The bytes the record needs, counted on even past the limit (a full writer tells the journal
  /// how much room to make).
  private(set) var wanted = 0

  init(base: UnsafeMutableRawPointer, offset: Int, limit: Int) {
    self.base = base
    self.offset = offset
    self.limit = limit
  }

  private mutating func reserve(_ count: Int) -> Bool {
    wanted += count
    guard outcome == .written else { return false }
    guard count <= limit - offset else {
      outcome = .full
      return false
    }
    return true
  }

  mutating func byte(_ value: UInt8) {
    guard reserve(1) else { return }
    base.storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    offset += 1
  }

  mutating func u32(_ value: UInt32) {
    guard reserve(4) else { return }
    base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    offset += 4
  }

  mutating func u64(_ value: UInt64) {
    guard reserve(8) else { return }
    base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    offset += 8
  }

  mutating func double(_ value: Double) { u64(value.bitPattern) }

  mutating func string(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
      guard bytes.count <= UInt32.max else { return markUnencodable() }
      u32(UInt32(bytes.count))
      guard reserve(bytes.count), let source = bytes.baseAddress else { return }
      (base + offset).copyMemory(from: source, byteCount: bytes.count)
      offset += bytes.count
    }
  }

  /// Bytes copied as they are (a record body from an adopted journal).
  mutating func raw(_ bytes: UnsafeRawBufferPointer) {
    guard reserve(bytes.count), let source = bytes.baseAddress else { return }
    (base + offset).copyMemory(from: source, byteCount: bytes.count)
    offset += bytes.count
  }

  /// A count written before its items are known: returns where to ``patch(_:at:)`` it.
  mutating func placeholder() -> Int {
    let at = offset
    u32(0)
    return at
  }

  func patch(_ value: UInt32, at position: Int) {
    guard outcome == .written else { return }
    base.storeBytes(of: value.littleEndian, toByteOffset: position, as: UInt32.self)
  }

  mutating func markUnencodable() {
    if outcome == .written { outcome = .unencodable }
  }

  // MARK: Values

  /// Parameters as the privacy rules leave them: personal ones dropped or pseudonymised, objects
  /// scrubbed inside, so nothing personal reaches the disk in the clear.
  mutating func parameters(_ parameters: EventParameters, privacy: PrivacyStage, depth: Int = 0) {
    let count = placeholder()
    var written: UInt32 = 0
    for parameter in parameters {
      if privacy.isPersonal(parameter) {
        guard let pseudonym = privacy.pseudonym(of: parameter.value) else { continue }
        string(parameter.key)
        value(pseudonym, privacy: privacy, depth: depth)
      } else {
        string(parameter.key)
        value(parameter.value, privacy: privacy, depth: depth)
      }
      written += 1
    }
    patch(written, at: count)
  }

  mutating func value(_ value: ParameterValue, privacy: PrivacyStage, depth: Int) {
    switch value {
    case .string(let text):
      byte(JournalFormat.Tag.string.rawValue)
      string(text)
    case .int(let number):
      byte(JournalFormat.Tag.int.rawValue)
      u64(UInt64(bitPattern: Int64(number)))
    case .double(let number):
      byte(JournalFormat.Tag.double.rawValue)
      double(number)
    case .bool(let flag):
      byte(JournalFormat.Tag.bool.rawValue)
      byte(flag ? 1 : 0)
    case .date(let date):
      byte(JournalFormat.Tag.date.rawValue)
      double(date.timeIntervalSince1970)
    case .list(let values):
      guard depth < JournalFormat.maximumDepth else { return markUnencodable() }
      byte(JournalFormat.Tag.list.rawValue)
      u32(UInt32(truncatingIfNeeded: values.count))
      for element in values { self.value(element, privacy: privacy, depth: depth + 1) }
    case .object(let fields):
      guard depth < JournalFormat.maximumDepth else { return markUnencodable() }
      byte(JournalFormat.Tag.object.rawValue)
      parameters(fields, privacy: privacy, depth: depth + 1)
    }
  }

  mutating func selection(_ selection: ServiceSelection) {
    switch selection {
    case .all:
      byte(0)
    case .only(let services):
      byte(1)
      serviceSet(services)
    case .allExcept(let services):
      byte(2)
      serviceSet(services)
    }
  }

  mutating func serviceSet(_ services: Set<ServiceID>) {
    u32(UInt32(truncatingIfNeeded: services.count))
    for service in services { string(service.rawValue) }
  }
}

/// The journal's binary layout, shared by the writer and the reader.
enum JournalFormat {
  /// "CTJ1", little-endian.
  static let magic: UInt32 = 0x314A_5443
  /// 2: a ring (wrap markers) after a 4 KiB header with the drop ledger; version 1 files (a 128-byte
  /// header, never wrapped) read the same.
  static let version: UInt32 = 2
  static let readableVersions: Set<UInt32> = [1, 2]
  /// A length word of all ones: the rest of the file is skipped, records go on after the header.
  static let wrapMarker: UInt32 = .max
  /// Bytes before the first record: magic, version, head, tail (`committed`), the session, and the
  /// drop ledger (``DropLedger``).
  static let headerBytes = 4096

  /// Where records start in a file of `version` (version 1 had no ledger).
  static func headerBytes(version: UInt32) -> Int { version == 1 ? 128 : headerBytes }
  /// Each record starts with its body's length.
  static let lengthBytes = 4
  /// Lists and objects deeper than this are not journaled (validation drops them anyway).
  static let maximumDepth = 16

  enum Header {
    static let magic = 0
    static let version = 4
    static let head = 8
    static let committed = 16
    static let hasSession = 24
    static let sessionID = 32
    static let sessionNumber = 40
    static let sessionStart = 48
    static let lastActivity = 56
    static let sessionEvents = 64
    /// The sequence number of the record at `committed`, and the end of what the worker holds
    /// (``JournalFile/protectedEnd``): the records between them may have reached a service before a
    /// kill (zero in files written before these were kept).
    static let tailSequence = 72
    static let protectedEnd = 80
    /// The run whose journal took this one's records (16 bytes of its id; zero while none did): a
    /// run killed between taking them and deleting this file left them in its own, in place.
    static let absorbedBy = 88
    /// When the run began (seconds since 1970, a `Double`): dead runs' journals are adopted oldest first.
    static let created = 104
    /// The drop ledger's region.
    static let ledger = 128
  }

  /// The first byte of a record's body.
  enum Record: UInt8 {
    case track = 1
    case identify
    case userProperty
    case defaultParameter
    case consent
    case endSession
    case startTimer
    case reset
  }

  /// The first byte of a value.
  enum Tag: UInt8 {
    case string = 0
    case int
    case double
    case bool
    case date
    case list
    case object
    case absent
  }

  static func kindCode(_ kind: EventKind) -> UInt8 {
    switch kind {
    case .screenView: 0
    case .action: 1
    case .event: 2
    }
  }

  static func kind(_ code: UInt8) -> EventKind? {
    switch code {
    case 0: .screenView
    case 1: .action
    case 2: .event
    default: nil
    }
  }
}
