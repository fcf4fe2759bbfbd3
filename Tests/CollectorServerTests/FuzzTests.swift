import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// Damaged and hostile bodies: every answer is 200 (with per-event rejections) or a 4xx, never a
/// 5xx; the server stays up; the store holds exactly the events the answers accepted.
@Suite("Collector fuzzing")
struct FuzzTests {
  static func mutate(_ body: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
    var bytes = body
    switch Int.random(in: 0..<12, using: &random) {
    case 0: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
    case 1:
      for _ in 0..<Int.random(in: 1...8, using: &random) {
        bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
      }
    case 2:
      let at = Int.random(in: 0..<bytes.count, using: &random)
      bytes.insert(
        contentsOf: (0..<Int.random(in: 1...16, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) },
        at: at)
    case 3: bytes = Array(String(repeating: "[", count: 100_000).utf8)
    case 4:
      bytes = Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "129.9", with: "1e99999").utf8)
    case 5:
      bytes = Array(
        String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"timestamp\":", with: "\"timestamp\":-").utf8
      )
    case 6:
      bytes = Array(
        String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"name\"", with: "\"name\":1,\"x\"").utf8)
    case 7: bytes = [0xFF, 0xFE] + bytes
    case 8:
      bytes = Array(
        String(decoding: bytes, as: UTF8.self).replacingOccurrences(
          of: "\"action\"", with: "{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}"
        ).utf8)
    case 9: bytes += Array(" {}".utf8)
    case 10:
      bytes = Array(
        String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"p-", with: "\"\u{0}\u{7}\\ud800").utf8)
    default:
      bytes = Array(
        String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"context\"", with: "\"context\":null,\"c\"")
          .utf8)
    }
    return bytes
  }

  @Test("3,000 damaged native batches and 1,000 damaged SimpleAnalytics payloads")
  func damagedBodies() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var random = SeededRandom(seed: 20_261_122)
      var accepted = 0
      var statuses: [Int: Int] = [:]
      for round in 0..<3000 {
        let events = (0..<Int.random(in: 1...8, using: &random)).map { Batches.event("f\(round)-\($0)") }
        let body = Self.mutate(Batches.body(events), &random)
        let (status, text) = try await client.execute(
          uri: "/v1/batch", method: .post, headers: [.authorization: "Bearer \(writeKey)"],
          body: ByteBuffer(bytes: body)
        ) { ($0.status.code, String(buffer: $0.body)) }
        statuses[status, default: 0] += 1
        #expect(status == 200 || (400..<500).contains(status), "round \(round): \(status) \(text)")
        if status == 200 {
          let response = try JSONDecoder().decode(BatchResponse.self, from: Data(text.utf8))
          accepted += response.accepted
        } else {
          #expect(text.hasPrefix(#"{"error":{"field":"#), "round \(round): \(text)")
        }
      }
      for round in 0..<1000 {
        let payload = """
          {"device_id":"d\(round)","app_name":"Shop","app_version":"1","system_version":"17","platform":"iOS",\
          "items":[{"description":"Opened \(round)","timestamp":"2026-11-20T10:15:30+03:00","parameters":{"p":"p-1"}}],\
          "counters":[]}
          """
        let body = Self.mutate(Array(payload.utf8), &random)
        let status = try await client.execute(
          uri: "/v1/simple-analytics?key=\(writeKey)", method: .post, body: ByteBuffer(bytes: body)
        ) { $0.status.code }
        #expect(status == 200 || (400..<500).contains(status), "SimpleAnalytics round \(round): \(status)")
      }
      // Still alive and answering.
      let health = try await client.execute(uri: "/health", method: .get) { $0.status }
      #expect(health == .ok)
      let stored = try await collector.store.eventCount(app: "ty")
      let simple = try await collector.store.events(app: "ty", limit: 100_000).filter {
        $0.kind == "action" && $0.context[.libraryName] == "SimpleAnalytics"
      }.count
      #expect(stored - simple == accepted)
      #expect(statuses[200, default: 0] > 100 && statuses[400, default: 0] > 1000, "\(statuses)")
    }
  }
}
