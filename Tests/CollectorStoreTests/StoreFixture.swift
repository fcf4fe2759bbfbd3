import CollectorClickHouse
import CollectorPostgres
import CollectorSQLite
import CollectorStore
import CollectorWire
import Foundation
import TestSupport

/// The engines the conformance suite runs against: SQLite always, PostgreSQL when
/// `COLLECTOR_TEST_POSTGRES_URL` names a server and ClickHouse when `COLLECTOR_TEST_CLICKHOUSE_URL`
/// does (both always in `.ci/run`).
enum Engine: String, CaseIterable, CustomStringConvertible, Sendable {
  case sqlite
  case postgres
  case clickhouse
  /// ClickHouse over two shards, through `Distributed` tables.
  case clickhouseCluster

  var description: String { rawValue }

  static var available: [Engine] {
    [.sqlite] + (PostgresTestServer.url == nil ? [] : [.postgres])
      + (ClickHouseTestServer.url == nil ? [] : [.clickhouse])
      + (ClickHouseTestServer.shardURLs == nil ? [] : [.clickhouseCluster])
  }

  /// The number of migrations the engine's schema has.
  var schemaVersion: Int {
    switch self {
    case .sqlite: 23
    case .postgres: 22
    case .clickhouse, .clickhouseCluster: 16
    }
  }

  /// A fresh, migrated, empty store.
  func open() async throws -> any EventStore {
    let store: any EventStore
    switch self {
    case .sqlite:
      let directory = TestFiles.unique("store")
      store = try SQLiteEventStore(path: directory.appendingPathComponent("collector.sqlite").path)
    case .postgres:
      store = try PostgresEventStore(url: PostgresTestServer.url!, schema: PostgresTestServer.uniqueSchema())
    case .clickhouse:
      store = try ClickHouseEventStore(url: ClickHouseTestServer.url!, database: ClickHouseTestServer.uniqueDatabase())
    case .clickhouseCluster:
      let shards = ClickHouseTestServer.shardURLs!
      store = try ClickHouseEventStore(
        url: shards[0], database: ClickHouseTestServer.uniqueDatabase(), cluster: ClickHouseTestServer.cluster,
        shardURLs: shards)
    }
    try await store.migrate()
    return store
  }
}

enum Rows {
  static let context = EventContext([
    .appName: "Trendyol", .appVersion: "7.12.0", .appBuild: "712", .osName: "iOS", .osVersion: "17.4", .platform: "ios",
    .deviceModel: "iPhone15,2", .locale: "tr_TR", .timeZone: "Europe/Istanbul", .libraryName: "CoreTracker",
    .libraryVersion: "1.0.0",
  ])

  static func event(
    _ id: String, app: String = "ty", name: String = "product_viewed", at time: Int64 = 1_700_000_000_000,
    device: String = "device-1", user: String? = nil, session: Int64? = nil,
    parameters: String = #"{"price":129.9,"product_id":"p-1","in_stock":true,"count":3}"#
  ) -> StoredEvent {
    StoredEvent(
      app: app, eventID: id, name: name, kind: "action", occurredAt: time, utcOffsetMinutes: 180,
      receivedAt: time + 500, deviceID: device, userID: user, sessionID: session, context: context,
      parametersJSON: parameters
    )
  }

  static func counter(
    _ name: String, app: String = "ty", device: String = "device-1", first: Int64, count: Int64, id: String? = nil
  ) -> StoredCounter {
    StoredCounter(
      app: app, counterID: id ?? "\(device)-\(name)-\(first)", deviceID: device, name: name, count: count,
      firstCountedAt: first, receivedAt: first + 10,
      context: context
    )
  }

  /// JSON text compared by value (PostgreSQL's jsonb rewrites spacing and key order).
  static func json(_ text: String) -> NSDictionary? {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? NSDictionary
  }
}
