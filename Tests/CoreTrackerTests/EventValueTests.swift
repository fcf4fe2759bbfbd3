import CoreTracker
import Foundation
import Testing

@Suite("Event values")
struct EventValueTests {
  @Test func literalKeepsDeclarationOrder() {
    let parameters: EventParameters = ["b": 1, "a": "x", "c": true, "d": 2.5]
    #expect(parameters.keys == ["b", "a", "c", "d"])
    #expect(parameters["a"] == .string("x"))
    #expect(parameters["missing"] == nil)
  }

  @Test func settingAnExistingKeyReplacesInPlace() {
    var parameters: EventParameters = ["a": 1, "b": 2]
    parameters["a"] = 3
    parameters["c"] = 4
    parameters["b"] = nil
    #expect(parameters.pairs.map(\.key) == ["a", "c"])
    #expect(parameters["a"] == .int(3))
  }

  @Test func defaultsNeverOverrideTheEventsOwnValues() {
    var parameters: EventParameters = ["product": "event-value", "id": "1"]
    parameters.addMissing(from: ["product": "default", "channel": "app"])
    #expect(parameters.pairs.map(\.key) == ["product", "id", "channel"])
    #expect(parameters["product"] == "event-value")
  }

  @Test func mergingLetsTheOtherSideWin() {
    let merged = (["a": 1, "b": 2] as EventParameters).merging(["b": 3, "c": 4])
    #expect(merged.pairs.map(\.key) == ["a", "b", "c"])
    #expect(merged["b"] == 3)
  }

  @Test func personalParametersAreMarked() {
    var parameters: EventParameters = ["a": 1]
    parameters.append(personal: "email", "x@y.z")
    #expect(parameters.map(\.isPersonal) == [false, true])
  }

  @Test(arguments: [
    (ParameterValue.string("x"), "x"), (.int(-3), "-3"), (.double(2.5), "2.5"), (.bool(true), "true"),
    (.date(Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00.000Z"),
  ])
  func valuesRenderAsText(value: ParameterValue, text: String) {
    #expect(value.text == text)
  }

  @Test(arguments: [
    (0.0, 0, "1970-01-01T00:00:00.000Z"),
    (951_782_400.5, 0, "2000-02-29T00:00:00.500Z"),
    (1_679_505_330.0, -7 * 3600, "2023-03-22T10:15:30.000-07:00"),
    (1_679_505_330.0, 3 * 3600 + 1800, "2023-03-22T20:45:30.000+03:30"),
    (-1.0, 0, "1969-12-31T23:59:59.000Z"),
    (4_102_444_799.999, 0, "2099-12-31T23:59:59.999Z"),
  ])
  func iso8601MatchesTheCalendar(seconds: Double, offset: Int, expected: String) {
    #expect(ISO8601.string(from: Date(timeIntervalSince1970: seconds), offsetSeconds: offset) == expected)
  }

  @Test func iso8601AgreesWithFoundationOverManyDates() {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2000 {
      let date = Date(timeIntervalSince1970: Double(Int64.random(in: 0...5_000_000_000_000, using: &generator)) / 1000)
      #expect(ISO8601.string(from: date) == formatter.string(from: date))
    }
  }
}

@Suite("Event ids")
struct EventIDTests {
  @Test func idsAreVersion7WithTheTimestampAndRFCVariant() {
    var generator = EventIDGenerator(seed: 1)
    let date = Date(timeIntervalSince1970: 1_800_000_000.123)
    let id = generator.next(at: date)
    #expect(id.millisecondsSince1970 == 1_800_000_000_123)
    #expect((id.high >> 12) & 0xf == 7)
    #expect(id.low >> 62 == 0b10)
    let text = id.description
    #expect(text.count == 36)
    #expect(Array(text)[14] == "7")
  }

  @Test func idsOfTheSameMillisecondStayOrderedAndUnique() {
    var generator = EventIDGenerator()
    let date = Date(timeIntervalSince1970: 1_800_000_000)
    let ids = (0..<10_000).map { _ in generator.next(at: date) }
    #expect(ids == ids.sorted())
    #expect(Set(ids).count == ids.count)
  }

  @Test func clockGoingBackwardsKeepsOrder() {
    var generator = EventIDGenerator(seed: 7)
    let first = generator.next(at: Date(timeIntervalSince1970: 1_800_000_001))
    let second = generator.next(at: Date(timeIntervalSince1970: 1_800_000_000))
    #expect(first < second)
  }

  @Test func textRoundTripsAndCodable() throws {
    var generator = EventIDGenerator()
    let id = generator.next(at: Date())
    #expect(EventID(id.description) == id)
    #expect(EventID(id.description.uppercased()) == id)
    let data = try JSONEncoder().encode([id])
    #expect(try JSONDecoder().decode([EventID].self, from: data) == [id])
  }

  @Test(arguments: [
    "", "not-a-uuid", "0193a4f2-6c1e-7abc-8def-0123456789a", "0193a4f2x6c1e-7abc-8def-0123456789ab",
    "0193a4f2-6c1e-7abc-8def-0123456789ag",
  ])
  func malformedTextIsRejected(text: String) {
    #expect(EventID(text) == nil)
  }
}

@Suite("Hashing")
struct HashingTests {
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
  ])
  func sha256MatchesTheStandardVectors(input: String, digest: String) {
    #expect(Hashing.sha256Hex(input) == digest)
  }

  @Test func sha256OfAMillionAs() {
    #expect(
      Hashing.sha256Hex(String(repeating: "a", count: 1_000_000))
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    )
  }
}
