import CollectorRuntime
import CollectorServer
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// A full ingest spool refuses a write before reading its body: every write route answers 503 with
/// `Retry-After`, nothing of the request is stored or quarantined (a malformed body is not even
/// read, so it is not answered 400), and once the drain has made room the routes take writes again.
@Suite("A full spool refuses before reading")
struct FullSpoolTests {
  /// A body no route could read: were it read, it would be refused 400 and quarantined.
  static let malformed = Array("{\"events\": [oops".utf8)

  /// The write routes, each with the headers presenting its key (in the URL or the body for some).
  static let routes: [(uri: String, headers: HTTPFields)] = {
    let bearer: HTTPFields = [.authorization: "Bearer \(writeKey)"]
    let basic: HTTPFields = [.authorization: "Basic \(Data("\(writeKey):".utf8).base64EncodedString())"]
    return [
      ("/v1/batch", bearer), ("/v1/simple-analytics?key=\(writeKey)", [:]), ("/v1/b", bearer), ("/v1/track", bearer),
      ("/mp/collect?api_secret=\(writeKey)&measurement_id=G-1", [:]), ("/import", basic), ("/track", [:]),
    ]
  }()

  static func post(
    _ client: some TestClientProtocol, _ uri: String, _ body: [UInt8], headers: HTTPFields
  ) async throws -> (HTTPResponse.Status, String, HTTPFields) {
    var headers = headers
    headers[.contentType] = "application/json"
    return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(bytes: body)) {
      ($0.status, String(buffer: $0.body), $0.headers)
    }
  }

  @Test("every write route answers 503 before reading its body while the spool is full")
  func fullSpoolRefusesEarly() async throws {
    nonisolated(unsafe) var flaky: FlakyStore!
    let directory = TemporaryDirectory()
    let batch = Batches.body((0..<100).map { Batches.event("e\($0)") })
    let collector = try await makeCollector(
      store: { base in
        flaky = FlakyStore(base)
        return flaky
      }, spoolDirectory: directory.url.appendingPathComponent("spool").path, spoolRows: 250)
    let spool = try #require(collector.spool)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      flaky.failing = true
      #expect(try await RouterTests.post(client, "/v1/batch", batch).0 == .ok)
      #expect(
        try await RouterTests.post(client, "/v1/batch", Batches.body((0..<100).map { Batches.event("f\($0)") })).0
          == .ok)
      #expect(!spool.isFull, "200 of 250 rows: room for a smaller batch")
      // 300 rows would be past the bound: refused after decoding, and from now on before.
      let third = try await RouterTests.post(
        client, "/v1/batch", Batches.body((0..<100).map { Batches.event("g\($0)") }))
      #expect(third.0 == .serviceUnavailable && third.2[.retryAfter] == "1")
      #expect(spool.isFull)
      for route in Self.routes {
        let (status, text, headers) = try await Self.post(client, route.uri, Self.malformed, headers: route.headers)
        #expect(status == .serviceUnavailable, "\(route.uri): \(text)")
        #expect(headers[.retryAfter] == "1", "\(route.uri)")
      }
      // The drain makes room once the store takes writes again.
      flaky.failing = false
      try await spool.flush()
      #expect(!spool.isFull)
      #expect(try await RouterTests.post(client, "/v1/batch", Self.malformed).0 == .badRequest)
      #expect(
        try await RouterTests.post(client, "/v1/batch", Batches.body((0..<100).map { Batches.event("g\($0)") })).0
          == .ok)
      try await spool.flush()
    }
    #expect(try await collector.store.eventCount(app: "ty") == 300)
    let quarantined = try await collector.store.quarantined(app: nil, limit: 100, includeReplayed: true)
    #expect(quarantined.count == 1, "only the malformed body read after the spool had room")
    try await collector.shutdown()
  }
}
