import CollectorClickHouse
import CollectorIngest
import CollectorReports
import CollectorRuntime
import CollectorSQLite
import CollectorServer
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import TestSupport

let writeKey = "test-write-key-0123456789"
let adminKey = "test-admin-key-0123456789"
let readKey = "test-read-key-0123456789"

/// Signs in through the dashboard's form (`POST /login`): the answer's status, headers and the
/// session cookie (`name=token`) when one was set.
func signIn(_ client: some TestClientProtocol, key: String, next: String = "/", headers: HTTPFields = [:])
  async throws -> (status: HTTPResponse.Status, headers: HTTPFields, cookie: String?)
{
  let form =
    "key=\(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&next="
    + next.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
  var fields = headers
  fields[.contentType] = "application/x-www-form-urlencoded"
  return try await client.execute(uri: "/login", method: .post, headers: fields, body: ByteBuffer(string: form)) {
    ($0.status, $0.headers, $0.headers[.setCookie]?.split(separator: ";").first.map(String.init))
  }
}

/// A collector on a fresh SQLite file with one write key (app `ty`) and one admin key; with an
/// ingest spool in `spoolDirectory` when given, holding at most `spoolRows`.
func makeCollector(
  rateLimit: Double? = nil, maximumQueuedRows: Int = 200_000, store: ((any EventStore) -> any EventStore)? = nil,
  path: String? = nil, spoolDirectory: String? = nil, spoolRows: Int = 500_000, logger: Logger = Logger(label: "test"),
  configure: (inout CollectorConfiguration) -> Void = { _ in }
) async throws -> EventCollector {
  var configuration = CollectorConfiguration()
  configure(&configuration)
  configuration.port = 0
  configuration.rateLimit = rateLimit
  configuration.maximumQueuedRows = maximumQueuedRows
  configuration.benchmarkRoutes = true
  let path =
    path
    ?? TestFiles.unique("collector")
    .appendingPathComponent("collector.sqlite").path
  let sqlite = try SQLiteEventStore(path: path, durability: .normal)
  try await sqlite.migrate()
  let chosen = store?(sqlite) ?? sqlite
  try await chosen.migrate()
  // A wrapped store (fault injection) serves reports only when the wrapper reads SQL itself.
  let reports: (any ReportEngine)? =
    if let sql = chosen as? any ReportQuerying {
      SQLReports(store: sql)
    } else if let clickhouse = chosen as? ClickHouseEventStore {
      ClickHouseReports(store: clickhouse)
    } else {
      nil
    }
  let metrics = CollectorMetrics()
  let spool = try spoolDirectory.map {
    try SpooledEventStore(
      directory: $0, base: chosen, maximumRows: spoolRows, retryDelay: .milliseconds(50), metrics: metrics,
      logger: logger)
  }
  let collector = EventCollector(
    configuration: configuration, store: chosen, reports: reports, logger: logger, metrics: metrics, spool: spool)
  try await collector.keyRing.provision(
    [
      ProvisionedKey(app: "ty", key: writeKey, scope: .write), ProvisionedKey(app: "*", key: adminKey, scope: .admin),
      ProvisionedKey(app: "*", key: readKey, scope: .read),
    ],
    now: 0
  )
  return collector
}

enum Batches {
  static let context = EventContext([
    .appName: "Trendyol", .appVersion: "7.12.0", .appBuild: "712", .osName: "iOS", .osVersion: "17.4", .platform: "ios",
    .deviceModel: "iPhone15,2", .locale: "tr_TR", .timeZone: "Europe/Istanbul", .libraryName: "CoreTracker",
    .libraryVersion: "1.0.0",
  ])

  static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

  static func event(_ id: String, device: String = "device-1", at time: Int64? = nil) -> CollectorEvent {
    CollectorEvent(
      id: id, name: "product_viewed", kind: "action", timestamp: time ?? now, utcOffsetMinutes: 180,
      parameters: ["product_id": .string("p-\(id)"), "price": .double(129.9), "in_stock": .bool(true)],
      anonymousId: device
    )
  }

  static func body(_ events: [CollectorEvent], counters: [CollectorCounter] = [], sentAt: Int64? = nil) -> [UInt8] {
    let batch = CollectorBatch(sentAt: sentAt ?? now, context: context, events: events, counters: counters)
    return BatchWriter.batch(batch)  // the client's writer: parameters in their order
  }
}

/// A store whose writes fail while `failing` is set (storage outage).
final class FlakyStore: ForwardingEventStore, @unchecked Sendable {
  let base: any EventStore
  private let lock = NSLock()
  private var _failing = false
  var failing: Bool {
    get { lock.withLock { _failing } }
    set { lock.withLock { _failing = newValue } }
  }

  init(_ base: any EventStore) { self.base = base }

  func write(_ batch: StoreBatch) async throws -> WriteSummary {
    if failing { throw StoreError.unavailable("disk unplugged (test)") }
    return try await base.write(batch)
  }
  func ping() async throws {
    if failing { throw StoreError.unavailable("disk unplugged (test)") }
    try await base.ping()
  }
}
