import CollectorWire
import Foundation
import TestSupport
import Testing

/// The one writer of the native batch, proven against the `Codable` types and the fast decoder.
@Suite("BatchWriter")
struct BatchWriterTests {
  /// Round trip and differential: what the writer writes, Foundation's `JSONDecoder` and
  /// ``BatchDecoder`` both read back as the batch it was given, and it means what the `Codable`
  /// encoding of the same batch means.
  @Test(arguments: [1, 2, 3])
  func generatedBatchesRoundTrip(seed: UInt64) throws {
    var random = SeededRandom(seed: seed)
    for _ in 0..<100 {
      let batch = randomBatch(&random)
      let written = BatchWriter.batch(batch)
      // JSONDecoder reads keys sorted; the collector's parser (below) keeps the written order.
      #expect(try JSONDecoder().decode(CollectorBatch.self, from: Data(written)).keysSorted == batch.keysSorted)
      let fast = try BatchDecoder.decode(written)
      #expect(fast.rejected.isEmpty)
      #expect(fast.events == batch.events && fast.counters == batch.counters)
      #expect(fast.context == batch.context && fast.sentAt == batch.sentAt)
      let codable = try JSONEncoder().encode(batch)
      #expect(
        try JSONDecoder().decode(CollectorBatch.self, from: codable)
          == JSONDecoder().decode(
            CollectorBatch.self, from: Data(written)))
    }
  }

  static let responses: [BatchResponse] = [
    BatchResponse(accepted: 0),
    BatchResponse(
      accepted: 3,
      rejected: [
        BatchResponse.Rejection(index: 1, id: "e-1", field: "events[1].name", reason: "is empty"),
        BatchResponse.Rejection(index: 4, id: nil, field: "events[4].id", reason: "is required \"quoted\""),
      ]),
  ]

  @Test(arguments: responses)
  func responsesRoundTrip(response: BatchResponse) throws {
    #expect(try JSONDecoder().decode(BatchResponse.self, from: Data(BatchWriter.response(response))) == response)
  }

  static let refusals: [FieldError] = [
    FieldError(field: "", reason: "the body is not valid gzip"),
    FieldError(field: "events[3].parameters.price", reason: "is \"NaN\"\u{0}\n</script>"),
  ]

  @Test(arguments: refusals)
  func refusalsRoundTrip(error: FieldError) throws {
    let answer = try JSONDecoder().decode([String: FieldError].self, from: Data(BatchWriter.refusal(error)))
    #expect(answer == ["error": error])
  }

  @Test func theContextIsWrittenAndDecodedFieldByFieldFromItsDeclaration() throws {
    let context = EventContext { "value of \($0.rawValue)" }
    let written = BatchWriter.context(context)
    let keys = try JSONDecoder().decode([String: String].self, from: Data(written))
    #expect(
      keys == Dictionary(uniqueKeysWithValues: ContextField.allCases.map { ($0.rawValue, "value of \($0.rawValue)") }))
    #expect(try JSONDecoder().decode(EventContext.self, from: Data(written)) == context)
    #expect(try JSONDecoder().decode(EventContext.self, from: JSONEncoder().encode(context)) == context)
    var missing = keys
    missing["locale"] = nil
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(EventContext.self, from: JSONEncoder().encode(missing))
    }
  }

  @Test(arguments: ContextField.allCases)
  func everyContextFieldHasItsSnakeCaseColumn(field: ContextField) {
    let column = field.column
    #expect(!column.contains { $0.isUppercase })
    #expect(column.replacingOccurrences(of: "_", with: "") == field.rawValue.lowercased())
    #expect(ContextField.columns.filter { $0 == column }.count == 1)
  }
}
