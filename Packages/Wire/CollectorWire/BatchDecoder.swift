/// A decoder made for the native batch format: one pass over the bytes, no `Foundation`, and
/// partial success built in.
///
/// Request-level problems (malformed JSON, invalid UTF-8, nesting deeper than
/// ``maximumDepth``, a missing or mistyped `context`, unknown top-level keys) throw a
/// ``FieldError`` naming the field path and the reason. A problem inside one event (a
/// missing field, a wrong type, an unknown key, a number out of range) rejects that event only:
/// it is listed in ``DecodedBatch/rejected`` with its index, id (when readable), field and reason,
/// and every other event is kept.
///
/// ```swift
/// let batch = try BatchDecoder.decode(body)
/// store(batch.events)
/// respond(BatchResponse(accepted: batch.events.count, rejected: batch.rejected))
/// ```
public enum BatchDecoder {
  /// The deepest nesting accepted anywhere in a body.
  public static let maximumDepth = 16

  /// Decodes a native batch.
  public static func decode(_ bytes: [UInt8]) throws(FieldError) -> DecodedBatch {
    try Parser.batch(Parser.document(bytes, named: "the batch"))
  }
}

/// A decoded batch: what was valid, and what was rejected.
public struct DecodedBatch: Sendable, Hashable {
  /// The client's send time (ms since 1970), if given.
  public var sentAt: Int64?
  /// The batch's context.
  public var context: EventContext
  /// The valid events, in order.
  public var events: [CollectorEvent]
  /// The valid counters.
  public var counters: [CollectorCounter]
  /// The events that were not valid, by index in the request.
  public var rejected: [BatchResponse.Rejection]
  /// The client's drop reports (`diagnostics`).
  public var diagnostics: [CollectorDropReport] = []
  /// Drop reports that broke a rule, with the field and the reason (the batch's events are kept).
  public var refusedDiagnostics: [FieldError] = []

  /// A decoded batch (for other decoders and tests).
  public init(
    sentAt: Int64?, context: EventContext, events: [CollectorEvent], counters: [CollectorCounter],
    rejected: [BatchResponse.Rejection]
  ) {
    self.sentAt = sentAt
    self.context = context
    self.events = events
    self.counters = counters
    self.rejected = rejected
  }
}

/// One event's outcome: kept, or rejected with its reason.
enum EventOutcome {
  case valid(CollectorEvent)
  case rejected(BatchResponse.Rejection)
}

struct Parser {
  let bytes: UnsafeBufferPointer<UInt8>
  var position = 0

  init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  var isAtEnd: Bool { position >= bytes.count }

  /// The one JSON value a body holds; anything but white space after it is an error.
  static func document(_ bytes: [UInt8], named name: String) throws(FieldError) -> JSONValue {
    try bytes.withUnsafeBufferPointer { buffer throws(FieldError) -> JSONValue in
      var parser = Parser(buffer)
      let top = try parser.value(field: "", depth: 0)
      parser.skipWhitespace()
      guard parser.isAtEnd else { throw FieldError(field: "", reason: "unexpected data after \(name)") }
      return top
    }
  }

  mutating func skipWhitespace() {
    while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x09, 0x0A, 0x0D: position += 1
      default: return
      }
    }
  }

  /// Where the parser is, below the `field` its caller named: kept as a stack and turned into
  /// text only when a value is rejected (building `events[12].parameters.price` for every value
  /// would cost more than parsing it).
  enum PathComponent {
    case key(String)
    case index(Int)
  }
  var path: [PathComponent] = []

  func fail(_ field: String, _ reason: String) -> FieldError {
    var rendered = field
    for component in path {
      switch component {
      case .key(let key): rendered = rendered.isEmpty ? key : "\(rendered).\(key)"
      case .index(let index): rendered += "[\(index)]"
      }
    }
    return FieldError(field: rendered, reason: reason)
  }
}
