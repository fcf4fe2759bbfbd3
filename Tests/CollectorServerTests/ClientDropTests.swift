import CollectorServer
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Drop reports through HTTP: carried in a native batch's `diagnostics`, kept once per report id,
/// read at `/v1/client-drops` and on the dashboard's quarantine page; a bad report is quarantined
/// alone, the batch's events stored.
@Suite("Client drop reports")
struct ClientDropTests {
  static func body(_ reports: [CollectorDropReport], events: [CollectorEvent] = []) -> [UInt8] {
    var batch = CollectorBatch(sentAt: Batches.now, context: Batches.context, events: events)
    batch.diagnostics = reports
    return BatchWriter.batch(batch)
  }

  static let report = CollectorDropReport(
    id: "run-1-1", timestamp: Batches.now, anonymousId: "device-1",
    dropped: [
      .init(service: nil, reason: "disk_budget", count: 1_100),
      .init(service: "collector", reason: "consent", count: 104),
    ])

  static func post(_ client: some TestClientProtocol, _ body: [UInt8]) async throws -> (HTTPResponse.Status, String) {
    try await client.execute(
      uri: "/v1/batch", method: .post, headers: [.authorization: "Bearer \(writeKey)"], body: ByteBuffer(bytes: body)
    ) { ($0.status, String(buffer: $0.body)) }
  }

  @Test("a report sent twice counts once; read as JSON, CSV and on the dashboard")
  func reportsAreKeptOnceAndRead() async throws {
    let collector = try await makeCollector()
    try await collector.application().test(.router) { client async throws in
      let first = try await Self.post(client, Self.body([Self.report], events: [Batches.event("e1")]))
      #expect(first.0 == .ok && first.1.contains(#""accepted":1"#), "\(first.1)")
      #expect(try await Self.post(client, Self.body([Self.report])).0 == .ok)
      let (status, json) = try await QuarantineTests.call(client, "/v1/client-drops?app=ty", key: readKey)
      #expect(status == .ok)
      let drops = try JSONDecoder().decode(DropsAnswer.self, from: Data(json.utf8))
      #expect(drops.total == 1_204 && drops.devices == 1, "\(json)")
      #expect(drops.drops.map(\.reason) == ["disk_budget", "consent"])
      let (_, csv) = try await QuarantineTests.call(client, "/v1/client-drops?app=ty&format=csv", key: readKey)
      #expect(csv.hasPrefix("service,reason,events,devices") && csv.contains("(tracker),disk_budget,1100,1"), "\(csv)")
      #expect(try await QuarantineTests.call(client, "/v1/client-drops?app=ty", key: writeKey).0 == .forbidden)
      #expect(try await QuarantineTests.call(client, "/v1/client-drops", key: readKey).0 == .badRequest)

      let cookie = try #require(try await signIn(client, key: readKey).cookie)
      let (_, page, _) = try await DashboardTests.get(client, "/dashboard/quarantine?app=ty", cookie: cookie)
      #expect(page.contains("Dropped on devices"))
      #expect(page.contains("1 device reported 1,204 events dropped: disk_budget 1,100, consent 104"), "\(page)")
    }
  }

  @Test("a report that breaks a rule is quarantined with its field; the batch's events are stored")
  func aBadReportIsQuarantinedAlone() async throws {
    let collector = try await makeCollector()
    try await collector.application().test(.router) { client async throws in
      var bad = Self.report
      bad.dropped[0].count = -5
      let answer = try await Self.post(client, Self.body([bad], events: [Batches.event("e2")]))
      #expect(answer.0 == .ok && answer.1.contains(#""accepted":1"#), "\(answer.1)")
      let (_, held) = try await QuarantineTests.call(client, "/v1/quarantine?app=ty", key: readKey)
      #expect(held.contains("diagnostics[0].dropped[0].count") && held.contains("between 1 and 10^12"), "\(held)")
      let (_, json) = try await QuarantineTests.call(client, "/v1/client-drops?app=ty", key: readKey)
      #expect(json.contains(#""total":0"#), "\(json)")
    }
  }

  private struct DropsAnswer: Decodable {
    struct Line: Decodable {
      var service: String
      var reason: String
      var count: Int64
      var devices: Int64
    }
    var total: Int64
    var devices: Int64
    var drops: [Line]
  }
}
