import CollectorWire
import Foundation
import TestSupport
import Testing
import WireJSON

private let context = EventContext([
  .appName: "Trendyol", .appVersion: "5.12.0", .appBuild: "5120", .osName: "iOS", .osVersion: "17.4.1",
  .platform: "iOS",
  .deviceModel: "iPhone15,2", .locale: "tr_TR", .timeZone: "Europe/Istanbul", .libraryName: "CoreTracker",
  .libraryVersion: "0.1.0",
])

private func randomText(_ random: inout SeededRandom) -> String {
  let pieces = ["a", "Z", "_", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "ü", "ç", "ğ", "😀", "\u{2028}", "0"]
  return String(
    (0..<Int.random(in: 0...12, using: &random)).map { _ in Character(pieces.randomElement(using: &random)!) })
}

func randomBatch(_ random: inout SeededRandom) -> CollectorBatch {
  let events = (0..<Int.random(in: 0...20, using: &random)).map { index -> CollectorEvent in
    var parameters: JSONObject = [:]
    for _ in 0..<Int.random(in: 0...6, using: &random) {
      let value: JSONValue =
        switch Int.random(in: 0..<4, using: &random) {
        case 0: .string(randomText(&random))
        case 1: .int(Int64.random(in: Int64.min...Int64.max, using: &random))
        case 2: .double(Double.random(in: -1e6...1e6, using: &random).rounded(.down) + 0.5)
        default: .bool(Bool.random(using: &random))
        }
      parameters[randomText(&random)] = value
    }
    return CollectorEvent(
      id: UUID().uuidString.lowercased(), name: randomText(&random),
      kind: ["action", "event", "screen_view"][index % 3],
      timestamp: Int64.random(in: 0...4_000_000_000_000, using: &random),
      utcOffsetMinutes: Int.random(in: -720...840, using: &random), parameters: parameters,
      anonymousId: randomText(&random), userId: Bool.random(using: &random) ? randomText(&random) : nil,
      sessionId: Bool.random(using: &random) ? Int64.random(in: 0...2_000_000_000, using: &random) : nil
    )
  }
  return CollectorBatch(
    sentAt: Int64.random(in: 0...4_000_000_000_000, using: &random), context: context, events: events,
    counters: [CollectorCounter(name: randomText(&random), count: 3, firstCountedAt: 1)]
  )
}

/// Events that agree: equal, except that a number spelled with a fraction or an exponent ("1e-400",
/// "9223372036854775807e0") may be an integer for one reader and a double for the other, as long as it
/// is the same number. Integers are compared exactly (no rounding through a double).
private func agree(_ lhs: [CollectorEvent], _ rhs: [CollectorEvent]) -> Bool {
  func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.int(let x), .double(let y)), (.double(let y), .int(let x)): Double(x) == y
    default: a == b
    }
  }
  guard lhs.count == rhs.count else { return false }
  return zip(lhs, rhs).allSatisfy { a, b in
    var a2 = a
    a2.parameters = b.parameters
    return a2 == b && a.parameters.count == b.parameters.count
      && a.parameters.allSatisfy { key, value in b.parameters[key].map { same(value, $0) } ?? false }
  }
}

@Suite("BatchDecoder")
struct BatchDecoderTests {
  /// Differential: on generated valid batches the decoder agrees with Foundation's JSONDecoder.
  @Test func agreesWithJSONDecoderOnGeneratedBatches() throws {
    var random = SeededRandom(seed: 7)
    for _ in 0..<300 {
      let batch = randomBatch(&random)
      let body = [UInt8](try JSONEncoder().encode(batch))
      let decoded = try BatchDecoder.decode(body)
      let reference = try JSONDecoder().decode(CollectorBatch.self, from: Data(body))
      #expect(decoded.rejected.isEmpty)
      // JSONEncoder writes keys in hash order and JSONDecoder reads them sorted: compare by key.
      #expect(decoded.events.map(\.keysSorted) == reference.events.map(\.keysSorted))
      #expect(decoded.context == reference.context && decoded.sentAt == reference.sentAt)
      #expect(decoded.counters == reference.counters)
    }
  }

  /// Differential on damaged bodies: never a crash; whenever the decoder accepts a body without
  /// rejecting anything, JSONDecoder reads the same batch from it.
  @Test func damagedBodiesNeverCrashAndNeverDisagreeSilently() throws {
    var random = SeededRandom(seed: 11)
    var thrown = 0
    for round in 0..<3000 {
      var body = [UInt8](try JSONEncoder().encode(randomBatch(&random)))
      guard !body.isEmpty else { continue }
      let at = Int.random(in: 0..<body.count, using: &random)
      let byte = UInt8.random(in: 0...255, using: &random)
      switch round % 4 {
      case 0: body[at] = byte
      case 1: body.removeSubrange(at...)
      case 2: body.insert(byte, at: at)
      default: body.remove(at: at)
      }
      do {
        let decoded = try BatchDecoder.decode(body)
        guard decoded.rejected.isEmpty else { continue }
        if let reference = try? JSONDecoder().decode(CollectorBatch.self, from: Data(body)) {
          #expect(
            agree(decoded.events, reference.events) && decoded.context == reference.context,
            "damage \(round % 4) with byte \(byte) near: \(String(decoding: body[max(0, at - 40)..<min(body.count, at + 40)], as: UTF8.self))"
          )
        }
      } catch {
        thrown += 1
        #expect(!error.reason.isEmpty)
      }
    }
    #expect(thrown > 1000)
  }

  @Test func invalidEventsAreRejectedOneByOneAndTheRestKept() throws {
    let body = """
      {"sentAt":1800000000000,"context":\(String(decoding: try JSONEncoder().encode(context), as: UTF8.self)),
      "events":[
        {"id":"a","name":"ok","kind":"action","timestamp":1,"anonymousId":"x"},
        {"id":"b","kind":"action","timestamp":1,"anonymousId":"x"},
        {"id":"c","name":7,"kind":"action","timestamp":1,"anonymousId":"x"},
        {"id":"d","name":"n","kind":"action","timestamp":1,"anonymousId":"x","surprise":true},
        {"id":"e","name":"n","kind":"action","timestamp":1,"anonymousId":"x","parameters":{"p":[1,null]}},
        {"id":"f","name":"n","kind":"action","timestamp":1.5,"anonymousId":"x"},
        "not an event",
        {"id":"h","name":"ok too","kind":"event","timestamp":2,"anonymousId":"y","parameters":{"big":99999999999999999999}}
      ],"counters":[]}
      """
    let decoded = try BatchDecoder.decode(Array(body.utf8))
    #expect(decoded.events.map(\.id) == ["a", "h"])
    #expect(decoded.events[1].parameters["big"] == .double(1e20))
    #expect(
      decoded.rejected.map { "\($0.index) \($0.id ?? "-") \($0.field): \($0.reason)" } == [
        "1 b events[1].name: is required",
        "2 c events[2].name: must be a string, not a number",
        "3 d events[3].surprise: is not a field of an event",
        "4 e events[4].parameters.p[1]: must be a string, a number, a boolean, a list or an object, not null",
        "5 f events[5].timestamp: must be an integer, not a number",
        "6 - events[6]: must be an object, not a string",
      ]
    )
  }

  /// Numbers written with a fraction or an exponent: integral values are read exactly as integers
  /// (not through a double), everything else as the double Foundation reads; both agree with JSONDecoder.
  @Test(arguments: [
    "5.0", "-0.0", "0e5", "1.50e1", "796149213656825377.0", "34314401013E8", "-9223372036854775808.0",
    "9223372036854775807e0", "9223372036854775808.0", "1e19", "0.5", "2.5e-1", "1e-400", "12345678901234567890",
    "1.7976931348623157e308",
  ])
  func numbersAgreeWithJSONDecoder(number: String) throws {
    let body = """
      {"context":\(String(decoding: try JSONEncoder().encode(context), as: UTF8.self)),"events":[
      {"id":"a","name":"n","kind":"action","timestamp":1,"utcOffsetMinutes":0,"anonymousId":"x","parameters":{"p":\(number)}}],
      "sentAt":1,"counters":[]}
      """
    let decoded = try BatchDecoder.decode(Array(body.utf8))
    let reference = try JSONDecoder().decode(CollectorBatch.self, from: Data(body.utf8))
    #expect(
      agree(decoded.events, reference.events), "\(decoded.events[0].parameters) vs \(reference.events[0].parameters)")
  }

  /// Which numbers are integers: a fraction of zeros or an exponent that makes the value whole
  /// gives an integer, any other fraction a double (read at once, without the exact check).
  @Test(arguments: [
    ("5.0", JSONValue.int(5)), ("2.000", .int(2)), ("0.10e1", .int(1)), ("7.00e0", .int(7)), ("-4.0", .int(-4)),
    ("129.9", .double(129.9)), ("1.05e1", .double(10.5)), ("-3.50", .double(-3.5)), ("0.001", .double(0.001)),
  ])
  func aNumberIsAnIntegerExactlyWhenItIsWhole(number: String, expected: JSONValue) throws {
    let body = """
      {"context":\(String(decoding: try JSONEncoder().encode(context), as: UTF8.self)),"events":[
      {"id":"a","name":"n","kind":"action","timestamp":1,"anonymousId":"x","parameters":{"p":\(number)}}]}
      """
    #expect(try BatchDecoder.decode(Array(body.utf8)).events.first?.parameters["p"] == expected)
  }

  @Test func anIntegralTimestampWithAnExponentIsExact() throws {
    let body = """
      {"context":\(String(decoding: try JSONEncoder().encode(context), as: UTF8.self)),"events":[
      {"id":"a","name":"n","kind":"action","timestamp":34314401013E2,"anonymousId":"x"}]}
      """
    #expect(try BatchDecoder.decode(Array(body.utf8)).events.map(\.timestamp) == [3_431_440_101_300])
  }

  /// A key given twice is ambiguous (JSON leaves it open; Foundation keeps the first, others the last):
  /// the event is refused with the key named, and the rest of the batch is kept.
  @Test func keysGivenTwiceAreRefusedNotGuessed() throws {
    let body = """
      {"context":\(String(decoding: try JSONEncoder().encode(context), as: UTF8.self)),"events":[
      {"id":"a","name":"n","kind":"action","timestamp":1,"anonymousId":"x","parameters":{"p":1,"p":2}},
      {"id":"b","name":"n","kind":"action","timestamp":1,"anonymousId":"x","name":"m"},
      {"id":"c","name":"n","kind":"action","timestamp":1,"anonymousId":"x"}],
      "counters":[]}
      """
    let decoded = try BatchDecoder.decode(Array(body.utf8))
    #expect(decoded.events.map(\.id) == ["c"])
    #expect(
      decoded.rejected.map { "\($0.field): \($0.reason)" } == [
        "events[0].parameters.p: appears twice", "events[1].name: appears twice",
      ])
    let counter = #"{"name":"c","count":1,"count":2,"firstCountedAt":1}"#
    #expect(throws: FieldError.self) {
      try BatchDecoder.decode(
        Array(body.replacingOccurrences(of: #""counters":[]"#, with: #""counters":[\#(counter)]"#).utf8))
    }
    let twiceInContext = body.replacingOccurrences(of: #""appName":"Trendyol""#, with: #""appName":"A","appName":"B""#)
    #expect(throws: FieldError.self) { try BatchDecoder.decode(Array(twiceInContext.utf8)) }
  }

  @Test(arguments: [
    ("", "the body ends where a value was expected"),
    ("[]", "the body is not a JSON object"),
    ("{\"events\":[]}", "context: is required"),
    ("{\"context\":{},\"events\":[]}", "context.appName: is required"),
    ("{\"contxt\":1}", "contxt: is not a field of a batch"),
    ("{\"events\":[] \"x\":1}", "expected ',' or '}'"),
    ("{\"events\":[1,]}", "unexpected character"),
    ("{\"events\":\"\\u12\"}", "invalid \\u escape"),
    ("{\"events\":\"\\ud800\"}", "unpaired surrogate"),
    ("{\"events\":[01]}", "leading zero"),
    ("{\"events\":[1e]}", "invalid number"),
    ("{\"events\":[tru]}", "invalid literal"),
    ("{\"events\":[]} x", "unexpected data after the batch"),
  ])
  func malformedBodiesSayWhatAndWhere(body: String, message: String) {
    #expect {
      try BatchDecoder.decode(Array(body.utf8))
    } throws: { error in
      "\(error)".contains(message)
    }
  }

  @Test(
    "a number past Double's range rejects its event alone; the others are kept",
    arguments: ["1e999", "-1e999"])
  func hugeNumbersRejectOneEvent(number: String) throws {
    let contextJSON = String(decoding: try JSONEncoder().encode(context), as: UTF8.self)
    let body = """
      {"context":\(contextJSON),"events":[\
      {"id":"a","name":"n","kind":"action","timestamp":1700000000000,"anonymousId":"d","parameters":{"x":\(number)}},\
      {"id":"b","name":"n","kind":"action","timestamp":\(number),"anonymousId":"d"},\
      {"id":"c","name":"n","kind":"action","timestamp":1700000000000,"anonymousId":"d"}]}
      """
    let decoded = try BatchDecoder.decode(Array(body.utf8))
    #expect(decoded.events.map(\.id) == ["c"])
    #expect(decoded.rejected.map(\.field) == ["events[0].parameters.x", "events[1].timestamp"])
    #expect(decoded.rejected.first?.reason == "the number is out of range")
  }

  @Test func invalidUTF8AndDeepNestingAreRefused() {
    #expect(throws: FieldError.self) {
      try BatchDecoder.decode(Array("{\"events\":[\"".utf8) + [0xC3, 0x28] + Array("\"]}".utf8))
    }
    #expect(throws: FieldError.self) {
      try BatchDecoder.decode(Array("{\"events\":[\"".utf8) + [0xED, 0xA0, 0x80] + Array("\"]}".utf8))
    }
    let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
    #expect {
      try BatchDecoder.decode(Array("{\"events\":\(deep)}".utf8))
    } throws: { error in
      "\(error)".contains("nested deeper than 16")
    }
  }
}

@Suite("SimpleAnalyticsDecoder")
struct SimpleAnalyticsDecoderTests {
  @Test func aParameterGivenTwiceRefusesItsItemAndKeepsTheRest() throws {
    let body = """
      {"device_id":"d","items":[
      {"description":"a","timestamp":"2026-01-01T00:00:00Z","parameters":{"p":"1","p":"2"}},
      {"description":"b","timestamp":"2026-01-01T00:00:00Z","parameters":{"p":"1"}}]}
      """
    let decoded = try SimpleAnalyticsDecoder.decode(Array(body.utf8))
    #expect(decoded.items.map(\.name) == ["b"])
    #expect(
      decoded.rejected.map { "\($0.index) \($0.field): \($0.reason)" } == ["0 items[0].parameters.p: appears twice"])
  }
}

/// A context field added after clients shipped is optional on the wire (``ContextField/addedLater``):
/// a batch from an older client, without it, is taken with the field empty; any other field missing
/// is still named.
@Suite("Context fields added later")
struct ContextFieldsAddedLaterTests {
  static let everyField = ContextField.allCases.map { #""\#($0.rawValue)":"v-\#($0.rawValue)""# }

  @Test(arguments: ContextField.allCases)
  func aFieldAddedLaterMayBeLeftOutAndIsEmpty(field: ContextField) throws {
    let without = Self.everyField.filter { !$0.hasPrefix(#""\#(field.rawValue)":"#) }
    let json = Array("{\(without.joined(separator: ","))}".utf8)
    let context = try EventContext(json: json, optional: [field])
    #expect(context[field] == "")
    #expect(ContextField.allCases.filter { $0 != field }.allSatisfy { context[$0] == "v-\($0.rawValue)" })
    #expect(throws: FieldError(field: "context.\(field.rawValue)", reason: "is required")) {
      try EventContext(json: json, optional: [])
    }
  }
}

extension CollectorBatch {
  /// The batch with its events' parameters' keys sorted.
  var keysSorted: CollectorBatch {
    var batch = self
    batch.events = events.map(\.keysSorted)
    return batch
  }
}

extension CollectorEvent {
  /// The event with its parameters' keys sorted at every depth: what `Codable` round trips keep.
  var keysSorted: CollectorEvent {
    var event = self
    if case .object(let object) = JSONValue.object(parameters).keysSorted { event.parameters = object }
    return event
  }
}

extension JSONValue {
  /// The value with every object's keys sorted.
  var keysSorted: JSONValue {
    switch self {
    case .object(let object):
      .object(
        JSONObject(object.fields.map { JSONField(key: $0.key, value: $0.value.keysSorted) }.sorted { $0.key < $1.key }))
    case .array(let values): .array(values.map(\.keysSorted))
    default: self
    }
  }
}
