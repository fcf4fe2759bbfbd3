import CollectorServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `Docs/openapi.json` against the server: every route it registers is described and nothing else
/// is, and what each operation answers a request without a key (or with an empty body) is a status
/// the document lists. `.ci/contract-fuzz` then runs schemathesis over the whole document.
@Suite("The OpenAPI document")
struct OpenAPIRouteTests {
  typealias Operations = [String: [String]]

  /// Each operation (`POST /v1/batch`) and its documented statuses.
  static func documented() throws -> Operations {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Docs/openapi.json")
    let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    #expect(document["openapi"] as? String == "3.1.0")
    let paths = try #require(document["paths"] as? [String: [String: Any]])
    var operations: Operations = [:]
    for (path, methods) in paths {
      for (method, operation) in methods {
        let responses = (operation as? [String: Any])?["responses"] as? [String: Any] ?? [:]
        operations["\(method.uppercased()) \(path)"] = responses.keys.sorted()
      }
    }
    return operations
  }

  @Test func everyRegisteredRouteIsDescribedAndNothingElse() async throws {
    let collector = try await makeCollector()
    let registered = Set(
      collector.router().routes.map { route -> String in
        let path = route.path.description.split(separator: "/").map { part in
          part.hasPrefix(":") ? "{\(part.dropFirst())}" : String(part)
        }
        return "\(route.method.rawValue) /" + path.joined(separator: "/")
      }.filter { !$0.contains(" /bench/") })  // only with benchmark-routes on; not part of the API
    let described = Set(try Self.documented().keys)
    #expect(registered.count >= 29, "the routes were read: \(registered.sorted())")
    #expect(registered.subtracting(described).sorted() == [], "registered but not in Docs/openapi.json")
    #expect(described.subtracting(registered).sorted() == [], "in Docs/openapi.json but not registered")
    try await collector.shutdown()
  }

  @Test func aRequestWithoutAKeyGetsADocumentedStatus() async throws {
    let collector = try await makeCollector()
    let operations = try Self.documented()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for (operation, statuses) in operations.sorted(by: { $0.key < $1.key }) {
        let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
        let path = parts[1].replacingOccurrences(of: "{name}", with: "overview")
          .replacingOccurrences(of: "{page}", with: "overview")
        let status = try await client.execute(
          uri: path, method: HTTPRequest.Method(parts[0])!, headers: [.contentType: "application/json"],
          body: parts[0] == "GET" ? nil : ByteBuffer(string: "{}")
        ) { $0.status.code }
        #expect(statuses.contains(String(status)), "\(operation) answered \(status), documented: \(statuses)")
      }
    }
  }
}
