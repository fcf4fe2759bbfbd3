import CoreTracker
import Foundation
import TestSupport
import Testing

@testable import Delivery

@Suite("Retry policy and gzip")
struct RetryAndGzipTests {
  @Test(arguments: [
    (200, DeliveryOutcome.delivered), (204, .delivered), (413, .split),
    (408, .retry(after: nil, error: "HTTP 408")), (429, .retry(after: nil, error: "HTTP 429")),
    (500, .retry(after: nil, error: "HTTP 500")), (503, .retry(after: nil, error: "HTTP 503")),
    (400, .drop(.rejectedByServer, error: "HTTP 400")), (404, .drop(.rejectedByServer, error: "HTTP 404")),
  ])
  func statusesMapToOutcomes(status: Int, outcome: DeliveryOutcome) {
    #expect(RetryPolicy.outcome(status: status, headers: [:]) == outcome)
  }

  @Test func retryAfterSecondsAndDatesAreRead() {
    #expect(RetryPolicy.outcome(status: 429, headers: ["retry-after": "7"]) == .retry(after: 7, error: "HTTP 429"))
    #expect(RetryPolicy.retryAfterSeconds(" 3 ") == 3)
    #expect(RetryPolicy.retryAfterSeconds("soon") == nil)
    let future = RetryPolicy.retryAfterSeconds("Wed, 21 Oct 2099 07:28:00 GMT")
    #expect((future ?? 0) > 1_000_000)
    #expect(RetryPolicy.retryAfterSeconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0)
  }

  @Test func backOffIsFullJitterUnderADoublingCeiling() {
    let policy = RetryPolicy(initialDelay: 1, maximumDelay: 60)
    var random = SystemRandomNumberGenerator()
    for attempt in 1...10 {
      let ceiling = min(60, pow(2, Double(attempt - 1)))
      let delays = (0..<200).map { _ in policy.delay(attempt: attempt, retryAfter: nil, random: &random) }
      #expect(delays.allSatisfy { $0 >= 0 && $0 <= ceiling })
      #expect(delays.max()! > ceiling * 0.5)  // spread over the range, not fixed
    }
    #expect(policy.delay(attempt: 3, retryAfter: 12, random: &random) == 12)
  }

  @Test(arguments: [0, 1, 100, 5000, 200_000])
  func gzipOutputIsReadByZlib(size: Int) async throws {
    var random = SeededRandom(seed: UInt64(size))
    let words = ["{\"name\":", "\"add_to_cart\"", ",\"id\":", "\"0193a4f2\"", "}", "[", "]", " ", "ü", "\n"]
    var input: [UInt8] = []
    while input.count < size { input += Array(words[Int(random.next() % UInt64(words.count))].utf8) }
    input = Array(input.prefix(size))
    let compressed = Gzip.compress(input)
    #expect(try await gunzipWithPython(compressed) == input)
    if size >= 5000 { #expect(compressed.count < size / 3) }
  }

  @Test func incompressibleBytesRoundTrip() async throws {
    var random = SeededRandom(seed: 42)
    let input = (0..<70_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    #expect(try await gunzipWithPython(Gzip.compress(input)) == input)
  }
}

/// Decompresses with zlib (through Python's standard library): an independent gzip reader. The
/// child's output is read, and its end waited for, without holding a thread of the test pool.
func gunzipWithPython(_ bytes: [UInt8]) async throws -> [UInt8] {
  let input = Pipe()
  let output = Pipe()
  let process = try ChildProcess(
    "/usr/bin/env",
    arguments: [
      "python3", "-c", "import gzip,sys; sys.stdout.buffer.write(gzip.decompress(sys.stdin.buffer.read()))",
    ], input: .pipe(input), output: .pipe(output))
  let writer = input.fileHandleForWriting
  try await offThePool { () -> Result<Void, any Error> in
    writer.write(Data(bytes))  // blocks while the child has not read (past the pipe's 64 KiB)
    return Result { try writer.close() }
  }.get()
  let data = await output.fileHandleForReading.readToEndOffThePool()
  guard await process.exit() == .exited(0) else { throw CocoaError(.fileReadCorruptFile) }
  return [UInt8](data)
}

@Suite("CRC-32")
struct CRC32Tests {
  @Test(arguments: [
    ("", UInt32(0)), ("a", 0xe8b7_be43), ("abc", 0x3524_41c2), ("123456789", 0xcbf4_3926),
    ("The quick brown fox jumps over the lazy dog", 0x414f_a339),
  ])
  func matchesTheStandardValues(text: String, crc: UInt32) {
    #expect(CRC32.checksum(Array(text.utf8)) == crc)
  }

  @Test func continuingEqualsOneShotForEverySplit() {
    let bytes = Array("slicing-by-8 must agree with the byte-wise method at every length".utf8)
    let whole = CRC32.checksum(bytes)
    for split in 0...bytes.count {
      let first = CRC32.checksum(Array(bytes[..<split]))
      #expect(CRC32.checksum(Array(bytes[split...]), continuing: first) == whole)
    }
  }
}
