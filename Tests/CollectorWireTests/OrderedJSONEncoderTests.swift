import CollectorWire
import Foundation
import TestSupport
import Testing
import WireJSON

@Suite("OrderedJSONEncoder")
struct OrderedJSONEncoderTests {
  struct Row: Encodable {
    var zeta: Int
    var alpha: String
    var nested: Nested?
    var list: [Double]
    var flag: Bool
    var missing: String?
  }

  struct Nested: Encodable {
    var y: Int64
    var b: JSONValue
  }

  @Test func keysComeInDeclarationOrderAndParametersInTheirOwn() throws {
    let row = Row(
      zeta: 1, alpha: "a/\"b\"", nested: Nested(y: -2, b: .object(["z": .int(1), "a": .array([.null, .bool(true)])])),
      list: [0.5, 2], flag: false, missing: nil)
    let text = String(decoding: try OrderedJSONEncoder().encode(row), as: UTF8.self)
    #expect(
      text
        == #"{"zeta":1,"alpha":"a/\"b\"","nested":{"y":-2,"b":{"z":1,"a":[null,true]}},"list":[0.5,2.0],"flag":false}"#)
  }

  /// Differential: on generated batches the encoder means what `JSONEncoder` means (read back by
  /// `JSONDecoder`), and the collector's parser reads its parameters back in their order.
  @Test(arguments: [11, 12])
  func agreesWithJSONEncoder(seed: UInt64) throws {
    var random = SeededRandom(seed: seed)
    for _ in 0..<100 {
      let batch = randomBatch(&random)
      let ordered = try OrderedJSONEncoder().encode(batch)
      let reference = try JSONEncoder().encode(batch)
      let decoder = JSONDecoder()
      #expect(
        try decoder.decode(CollectorBatch.self, from: Data(ordered))
          == decoder.decode(CollectorBatch.self, from: reference))
      #expect(try BatchDecoder.decode(ordered).events == batch.events)
    }
  }
}
