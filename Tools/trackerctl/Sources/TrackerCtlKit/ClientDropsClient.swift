public import CollectorReports
import Foundation

extension QuarantineClient {
  /// What devices reported dropping (`GET /v1/client-drops`): the events that never arrived, beside
  /// the quarantine's refused ones. `from`/`to` as the report API takes them (default: 7 days).
  public func clientDrops(app: String, from: String?, to: String?, appName: String?) async throws -> ClientDrops {
    let data = try await call("GET", "v1/client-drops", ["app": app, "from": from, "to": to, "appName": appName])
    return try JSONDecoder().decode(ClientDrops.self, from: data)
  }
}
