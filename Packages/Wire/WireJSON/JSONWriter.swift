/// A small, fast JSON writer into a byte buffer: what client services use to encode events once,
/// on the tracker's worker, instead of going through `JSONEncoder` per event.
///
/// It writes what it is told in order; it does not check nesting. Strings are escaped per RFC 8259;
/// doubles use Swift's shortest round-tripping form (non-finite values are written as `null`).
///
/// ```swift
/// var json = JSONWriter()
/// json.beginObject()
/// json.member("name", "add_to_cart")
/// json.member("quantity", 2)
/// json.endObject()
/// // json.bytes == Array(#"{"name":"add_to_cart","quantity":2}"#.utf8)
/// ```
public struct JSONWriter: Sendable {
  /// The JSON written so far.
  public private(set) var bytes: [UInt8]
  private var needsComma = false

  /// An empty writer with room for `capacity` bytes.
  public init(capacity: Int = 256) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  /// Starts an object (`{`).
  public mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
  }

  /// Ends an object (`}`).
  public mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  /// Starts an array (`[`).
  public mutating func beginArray() {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma = false
  }

  /// Ends an array (`]`).
  public mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// Writes an object key (the value follows).
  public mutating func key(_ key: String) {
    separate()
    writeString(key)
    bytes.append(UInt8(ascii: ":"))
    needsComma = false
  }

  /// Writes an object member: `key` and its string value.
  public mutating func member(_ key: String, _ value: String) { member(key) { $0.string(value) } }

  /// Writes an object member: `key` and its integer value.
  public mutating func member(_ key: String, _ value: Int64) { member(key) { $0.int(value) } }

  /// Writes an object member: `key` and its integer value.
  public mutating func member(_ key: String, _ value: Int) { member(key) { $0.int(Int64(value)) } }

  /// Writes an object member: `key` and its floating-point value (`null` when not finite).
  public mutating func member(_ key: String, _ value: Double) { member(key) { $0.double(value) } }

  /// Writes an object member: `key` and `true` or `false`.
  public mutating func member(_ key: String, _ value: Bool) { member(key) { $0.bool(value) } }

  private mutating func member(_ key: String, value write: (inout JSONWriter) -> Void) {
    self.key(key)
    write(&self)
  }

  /// Writes a string value.
  public mutating func string(_ value: String) {
    separate()
    writeString(value)
    needsComma = true
  }

  /// Writes an integer value (the common widths without generic dispatch: a cross-module generic
  /// call would format through the unspecialised path, which allocates).
  public mutating func int(_ value: Int64) {
    separate()
    bytes.append(contentsOf: String(value).utf8)
    needsComma = true
  }

  /// Writes an integer value.
  public mutating func int(_ value: Int) { int(Int64(value)) }

  /// Writes an integer value.
  public mutating func int(_ value: some BinaryInteger) {
    separate()
    bytes.append(contentsOf: String(value).utf8)
    needsComma = true
  }

  /// Writes a floating-point value (`null` when not finite).
  public mutating func double(_ value: Double) {
    separate()
    if value.isFinite {
      bytes.append(contentsOf: String(value).utf8)
    } else {
      bytes.append(contentsOf: "null".utf8)
    }
    needsComma = true
  }

  /// Writes `true` or `false`.
  public mutating func bool(_ value: Bool) {
    separate()
    bytes.append(contentsOf: (value ? "true" : "false").utf8)
    needsComma = true
  }

  /// Writes `null`.
  public mutating func null() {
    separate()
    bytes.append(contentsOf: "null".utf8)
    needsComma = true
  }

  /// Writes already-encoded JSON (one complete value) as the next value.
  public mutating func raw(_ json: some Collection<UInt8>) {
    separate()
    bytes.append(contentsOf: json)
    needsComma = true
  }

  private mutating func separate() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
  }

  private mutating func writeString(_ value: String) {
    bytes.append(UInt8(ascii: "\""))
    for byte in value.utf8 {
      switch byte {
      case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
      case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
      case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: [
          UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
          hex[Int(byte & 0xf)],
        ])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
