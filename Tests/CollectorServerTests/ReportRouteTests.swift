import CollectorReports
import CollectorServer
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `GET /v1/reports/...` through Hummingbird's test client: read scope, JSON, CSV, errors.
@Suite("Report routes")
struct ReportRouteTests {
  static func get(_ client: some TestClientProtocol, _ uri: String, key: String = adminKey, accept: String? = nil)
    async throws -> (HTTPResponse.Status, String, HTTPFields)
  {
    var headers: HTTPFields = [.authorization: "Bearer \(key)"]
    if let accept { headers[.accept] = accept }
    return try await client.execute(uri: uri, method: .get, headers: headers) {
      ($0.status, String(buffer: $0.body), $0.headers)
    }
  }

  @Test func reportsNeedAReadKeyAndAnswerJSONOrCSV() async throws {
    let collector = try await makeCollector()
    let now = Batches.now
    try await collector.application(closesStore: false).test(.router) { client async throws in
      var events = (0..<6).map { Batches.event("e\($0)", device: "device-\($0 % 2)", at: now - 60_000) }
      events[5].name = "checkout_viewed"
      let (stored, _, _) = try await RouterTests.post(client, "/v1/batch", Batches.body(events))
      #expect(stored == .ok)

      let range = "app=ty&from=\(now - 86_400_000)&to=\(now + 1)"
      let (status, json, _) = try await Self.get(client, "/v1/reports/top-events?\(range)")
      #expect(status == .ok)
      let top = try JSONDecoder().decode(CountList.self, from: Data(json.utf8))
      #expect(top.rows.map(\.name) == ["product_viewed", "checkout_viewed"] && top.rows.map(\.count) == [5, 1])
      #expect(top.rows.map(\.devices) == [2, 1])

      let (csvStatus, csv, headers) = try await Self.get(client, "/v1/reports/top-events?\(range)&format=csv")
      #expect(csvStatus == .ok && headers[.contentType]?.hasPrefix("text/csv") == true)
      #expect(csv.hasPrefix("event,count,devices,share %\r\nproduct_viewed,5,2,83.3\r\n"))
      let (_, accepted, _) = try await Self.get(client, "/v1/reports/overview?\(range)", accept: "text/csv")
      #expect(accepted.hasPrefix("figure,value,previous,change\r\nevents,6,0,"))

      for name in Report.names {
        let extra =
          [
            "events": "&event=product_viewed", "parameter-values": "&event=product_viewed&parameter=product_id",
            "funnel": "&steps=product_viewed,checkout_viewed&window=1h",
            "funnel-paths": "&steps=product_viewed,checkout_viewed&window=1h",
            "funnel-dropped": "&steps=product_viewed,checkout_viewed&dropped=1",
            "retained": "&period=day&cohort=\(now - 86_400_000)&offset=0",
          ][name] ?? ""
        let (answer, body, _) = try await Self.get(client, "/v1/reports/\(name)?\(range)\(extra)")
        #expect(answer == .ok, "\(name): \(body)")
      }

      let (writeKeyStatus, _, _) = try await Self.get(client, "/v1/reports/overview?\(range)", key: writeKey)
      #expect(writeKeyStatus == .forbidden)
      let (noApp, why, _) = try await Self.get(client, "/v1/reports/overview")
      #expect(noApp == .badRequest && why.contains(#""field":"app""#))
      let (badBucket, bucketWhy, _) = try await Self.get(client, "/v1/reports/timeseries?\(range)&bucket=minute")
      #expect(badBucket == .badRequest && bucketWhy.contains("bucket"))
      let (badUnit, unitWhy, _) = try await Self.get(client, "/v1/reports/retention?\(range)&unit=account")
      #expect(badUnit == .badRequest && unitWhy.contains(#""field":"unit""#))
      let (byDevice, answer, _) = try await Self.get(client, "/v1/reports/funnel?\(range)&steps=a,b&unit=device")
      #expect(byDevice == .ok && answer.contains(#""unit":"device""#))
      let (badDate, dateWhy, _) = try await Self.get(client, "/v1/reports/overview?app=ty&from=yesterday")
      #expect(badDate == .badRequest && dateWhy.contains(#""field":"from""#))
      for (parameter, value) in [("from", "2026-02-30"), ("to", "2026-11-02T10:00:00%2B25:00")] {
        let (impossible, why, _) = try await Self.get(client, "/v1/reports/overview?app=ty&\(parameter)=\(value)")
        #expect(impossible == .badRequest && why.contains(#""field":"\#(parameter)""#), "\(parameter)=\(value): \(why)")
      }
      for path in ["/v1/reports/overview?\(range)&format=xml", "/v1/client-drops?\(range)&format=xml"] {
        let (badFormat, formatWhy, _) = try await Self.get(client, path)
        #expect(badFormat == .badRequest && formatWhy.contains(#""field":"format""#), "\(path): \(formatWhy)")
      }
      let (asJSON, _, _) = try await Self.get(client, "/v1/reports/overview?\(range)&format=json")
      #expect(asJSON == .ok)
      let (unknown, _, _) = try await Self.get(client, "/v1/reports/sql?\(range)")
      #expect(unknown == .notFound)
    }
  }
}
