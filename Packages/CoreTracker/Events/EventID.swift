public import Foundation

/// The identity of one tracked event: a UUID version 7 (time-ordered), assigned by the tracker.
///
/// It is the idempotency key end to end: the collector de-duplicates on it and Mixpanel receives
/// it as `$insert_id`, so a retried upload never double-counts. Stored as 128 bits; rendered as
/// the usual 36-character lowercase UUID text.
public struct EventID: Sendable, Hashable, Comparable {
  /// The high 64 bits: 48-bit Unix milliseconds, version, 12-bit sequence.
  public let high: UInt64
  /// The low 64 bits: variant and 62 random bits.
  public let low: UInt64

  /// Creates an identifier from its two halves.
  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// Parses the 36-character UUID text; `nil` when it is not one.
  public init?(_ text: String) {
    var nibbles: [UInt8] = []
    nibbles.reserveCapacity(32)
    for (offset, byte) in text.utf8.enumerated() {
      if [8, 13, 18, 23].contains(offset) {
        guard byte == UInt8(ascii: "-") else { return nil }
        continue
      }
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibbles.append(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): nibbles.append(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): nibbles.append(byte - UInt8(ascii: "A") + 10)
      default: return nil
      }
    }
    guard nibbles.count == 32, text.utf8.count == 36 else { return nil }
    high = nibbles[0..<16].reduce(0) { $0 << 4 | UInt64($1) }
    low = nibbles[16..<32].reduce(0) { $0 << 4 | UInt64($1) }
  }

  /// What an id derived with ``derived(_:)`` stands for.
  enum Derivation {
    static let sessionStart: UInt64 = 0x5353_5441_5254_0001
    static let sessionEnd: UInt64 = 0x5345_4e44_0000_0002
  }

  /// An id made from this one for an event the tracker generates because of it (the session it
  /// starts or ends): the same time part, other random bits, the same every time it is derived.
  func derived(_ salt: UInt64) -> EventID {
    EventID(high: high, low: (Hashing.mix(low ^ salt) & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000)
  }

  /// The time part: when the tracker accepted the event, to the millisecond.
  public var millisecondsSince1970: UInt64 { high >> 16 }

  public static func < (lhs: EventID, rhs: EventID) -> Bool {
    (lhs.high, lhs.low) < (rhs.high, rhs.low)
  }
}

extension EventID: CustomStringConvertible {
  /// The lowercase UUID text, e.g. `0193a4f2-6c1e-7abc-8def-0123456789ab`.
  public var description: String {
    let hex = Array("0123456789abcdef".utf8)
    var bytes = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
    var index = 0
    for half in [high, low] {
      for shift in stride(from: 60, through: 0, by: -4) {
        if [8, 13, 18, 23].contains(index) { index += 1 }
        bytes[index] = hex[Int((half >> UInt64(shift)) & 0xf)]
        index += 1
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

extension EventID: Codable {
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let id = EventID(text) else {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a UUID")
    }
    self = id
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}

/// Makes ``EventID``s: UUID version 7, monotonic within one generator (RFC 9562, method 1: a
/// 12-bit counter in `rand_a` orders ids of the same millisecond).
///
/// Not thread-safe by itself: each tracker's worker owns one. Seeded once from the system's random
/// source, then a SplitMix64 stream, so making an id costs no system call.
public struct EventIDGenerator: Sendable {
  private var state: UInt64
  private var lastMilliseconds: UInt64 = 0
  private var sequence: UInt64 = 0

  /// A generator seeded from the system's random source.
  public init() {
    var system = SystemRandomNumberGenerator()
    state = system.next()
  }

  /// A generator with a fixed seed, for reproducible tests and simulations.
  public init(seed: UInt64) { state = seed }

  /// The next identifier, stamped with `date`.
  public mutating func next(at date: Date) -> EventID {
    var milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
    if milliseconds <= lastMilliseconds {
      // Same (or an earlier) millisecond: keep ids ordered by bumping the counter, then the clock.
      milliseconds = lastMilliseconds
      sequence += 1
      if sequence > 0xfff {
        milliseconds += 1
        sequence = 0
      }
    } else {
      sequence = 0
    }
    lastMilliseconds = milliseconds
    let high = (milliseconds & 0xffff_ffff_ffff) << 16 | 0x7000 | sequence
    let low = (nextRandom() & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000
    return EventID(high: high, low: low)
  }

  private mutating func nextRandom() -> UInt64 {
    state &+= 0x9e37_79b9_7f4a_7c15
    return Hashing.mix(state)
  }
}
