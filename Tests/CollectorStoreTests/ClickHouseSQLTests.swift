import AsyncHTTPClient
import CollectorClickHouse
import CollectorStore
import CollectorWire
import Foundation
import NIOCore
import TestSupport
import Testing

/// ClickHouse 18.16 has no bound parameters: every value goes through `ClickHouseSQL.literal`.
@Suite("ClickHouse literals")
struct ClickHouseSQLTests {
  static let hostile: [String] = [
    "", "plain", "it's", "'; DROP TABLE events; --", "back\\slash", "\\'", "'\\", "end\\", "\u{0}nul",
    "tab\tnew\nline\r",
    "\u{1F}\u{7F}", "çğüşöı ÇĞÜŞÖİ", "emoji 🛒👩‍👩‍👧", "\"double\"", "`back`", "$1 ?1 {p:String}", "%00%27",
    String(repeating: "'\\", count: 500),
  ]

  @Test(arguments: [
    ("it's", #"'it\'s'"#), (#"a\b"#, #"'a\\b'"#), ("\u{0}", #"'\x00'"#), ("\n", #"'\x0A'"#), ("\u{7F}", #"'\x7F'"#),
    ("é", "'é'"),
  ])
  func escapes(text: String, literal: String) {
    #expect(ClickHouseSQL.literal(text) == literal)
  }

  @Test func integersAndLists() {
    #expect(ClickHouseSQL.literal(Int64(-42)) == "-42")
    #expect(ClickHouseSQL.literal(Int64.min) == "toInt64('-9223372036854775808')")
    #expect(ClickHouseSQL.list(["a", "b'"]) == #"('a', 'b\'')"#)
    #expect(ClickHouseSQL.list([String]()) == "(NULL)")
  }

  @Test(arguments: [("coretracker", true), ("t_1a", true), ("", false), ("1a", false), ("a-b", false), ("A", false)])
  func identifiers(name: String, valid: Bool) {
    #expect(ClickHouseSQL.isValidIdentifier(name) == valid)
  }

  /// Every hostile text reads back byte for byte from a real server, alone and inside a condition.
  @Test(.enabled(if: ClickHouseTestServer.url != nil))
  func hostileTextReadsBackExactly() async throws {
    let client = try ClickHouseClient(
      url: URL(string: ClickHouseTestServer.url!)!, database: "system", http: ClickHouseClient.http)
    for text in Self.hostile {
      let rows = try await client.rows(
        "SELECT \(ClickHouseSQL.literal(text)) AS t, \(ClickHouseSQL.literal(text)) = \(ClickHouseSQL.literal(text)) AS same, "
          + "length(\(ClickHouseSQL.literal(text))) AS bytes")
      #expect(rows.first?["t"].text == text)
      #expect(rows.first?["same"].int == 1)
      #expect(rows.first?["bytes"].int == Int64(text.utf8.count))
    }
  }

  /// A streamed answer arrives in pieces, each taken as it comes, and adds up to the whole (200,000
  /// numbers, 1.6 MB); a statement the server refuses fails with its message.
  @Test(.enabled(if: ClickHouseTestServer.url != nil))
  func aStreamedAnswerIsTakenPieceByPiece() async throws {
    let client = try ClickHouseClient(
      url: URL(string: ClickHouseTestServer.url!)!, database: "system", http: ClickHouseClient.http)
    let count = 200_000
    let (pieces, bytes, sum) = try await client.stream(
      "SELECT number FROM system.numbers LIMIT \(count) FORMAT RowBinary", from: (0, 0, UInt64(0))
    ) { (state: inout (Int, Int, UInt64), piece) in
      state.0 += 1
      // Pieces are cut at no row's edge in particular: each byte added at its place in its number.
      piece.withUnsafeReadableBytes { piece in
        for byte in piece {
          state.2 &+= UInt64(byte) << (UInt64(state.1 % 8) * 8)
          state.1 += 1
        }
      }
    }
    #expect(pieces > 1)
    #expect(bytes == count * 8)
    #expect(sum == UInt64(count) * UInt64(count - 1) / 2)
    let error = await #expect(throws: StoreError.self) {
      _ = try await client.stream("SELECT nonsense FROM nowhere FORMAT RowBinary", from: 0) { (_: inout Int, _) in }
    }
    #expect("\(error.map { "\($0)" } ?? "")".contains("nowhere"))
  }

  /// Every hostile text sent as external data (the write's id lists) arrives byte for byte, and is
  /// found by `IN` among texts that differ from it by one escaped byte.
  @Test(.enabled(if: ClickHouseTestServer.url != nil))
  func hostileTextGoesThroughExternalTables() async throws {
    let client = try ClickHouseClient(
      url: URL(string: ClickHouseTestServer.url!)!, database: "system", http: ClickHouseClient.http)
    let rows = try await client.rows(
      "SELECT value AS t, length(value) AS bytes, value IN probe AS found FROM texts",
      tables: [
        .init("texts", Self.hostile), .init("probe", Self.hostile.filter { $0.hasPrefix("tab") || $0 == "\\'" }),
      ])
    #expect(rows.map { $0["t"].text } == Self.hostile.map(Optional.some))
    #expect(rows.map { $0["bytes"].int } == Self.hostile.map { Int64($0.utf8.count) })
    #expect(rows.filter { $0["found"].int == 1 }.compactMap { $0["t"].text } == ["\\'", "tab\tnew\nline\r"])
  }

  /// Session ids the rows take in turn: none, the largest and smallest integers, negative ones, zero
  /// (the `TabSeparated` writer writes an integer's digits itself).
  static let sessionIDs: [Int64?] = [nil, .max, .min, -1, 0, 1_790_000_000_000, -(1 << 40) - 7]

  /// Events and counters go in as `TabSeparated` rows: with every hostile text in every text column
  /// (ids, names, person, session, each context field) and as a parameter's key and value, each
  /// row reads back as written, and the parameter arrays hold the text byte for byte.
  @Test(.enabled(if: ClickHouseTestServer.url != nil))
  func hostileTextIsStoredAsWritten() async throws {
    let (store, client, database) = try await Self.migratedStore()
    var batch = StoreBatch()
    for (index, text) in Self.hostile.enumerated() {
      let parameters = try JSONSerialization.data(withJSONObject: [text: text, "n": index], options: [.sortedKeys])
      var context = EventContext()
      for field in ContextField.allCases { context[field] = text }
      batch.events.append(
        StoredEvent(
          app: "ty", eventID: "e-\(index)-" + text, name: text, kind: text,
          occurredAt: 1_790_000_000_000 + Int64(index),
          utcOffsetMinutes: index.isMultiple(of: 3) ? -570 : 180, receivedAt: 1_790_000_000_000,
          deviceID: "d-" + text, userID: text, sessionID: Self.sessionIDs[index % Self.sessionIDs.count],
          context: context,
          parametersJSON: String(decoding: parameters, as: UTF8.self)))
      batch.counters.append(
        StoredCounter(
          app: "ty", counterID: "c-\(index)-" + text, deviceID: text, name: text, count: Int64(index + 1),
          firstCountedAt: 1_790_000_000_000, receivedAt: 1_790_000_000_000, context: context))
    }
    #expect(try await store.write(batch).insertedEvents == Self.hostile.count)
    #expect(try await store.events(app: "ty", limit: 100) == batch.events)
    #expect(try await store.counters(app: "ty").sorted { $0.count < $1.count } == batch.counters)
    let arrays = try await client.rows(
      "SELECT arrayFilter(k -> k != 'n', param_keys)[1] AS key, "
        + "arrayFilter((v, k) -> k != 'n', param_values, param_keys)[1] AS value FROM \(database).events "
        + "ORDER BY occurred_at")
    #expect(arrays.map { $0["key"].text } == Self.hostile.map(Optional.some))
    #expect(arrays.map { $0["value"].text } == Self.hostile.map(Optional.some))
    try await store.close()
  }

  /// A store migrated in a database of its own, and a client of that database for the test's SQL.
  static func migratedStore() async throws -> (ClickHouseEventStore, ClickHouseClient, String) {
    let database = ClickHouseTestServer.uniqueDatabase()
    let store = try ClickHouseEventStore(url: ClickHouseTestServer.url!, database: database)
    try await store.migrate()
    let client = try ClickHouseClient(
      url: URL(string: ClickHouseTestServer.url!)!, database: database, http: ClickHouseClient.http)
    return (store, client, database)
  }

  /// A store written before the context had its own columns for the time zone and the library's
  /// name and version (`library` held `name/version`) gains them at its next start, from
  /// ``ContextField``, and reads its old rows' library as name and version.
  @Test(.enabled(if: ClickHouseTestServer.url != nil))
  func olderStoresGainTheDeclaredContextColumns() async throws {
    let (store, client, database) = try await Self.migratedStore()
    for table in ["events", "counters"] {
      try await client.execute(
        "ALTER TABLE \(database).\(table) DROP COLUMN time_zone, DROP COLUMN library_name, DROP COLUMN library_version")
    }
    try await client.execute(
      """
      INSERT INTO \(database).events (app, event_id, name, kind, occurred_at, utc_offset_minutes, received_at, device_id,
        app_name, library, parameters) VALUES ('ty', 'e-1', 'opened', 'event', 1700000000000, 0, 1700000000000, 'd-1',
        'Trendyol', 'CoreTracker/1.0.0', '{}')
      """)
    try await store.migrate()
    let context = try #require(try await store.events(app: "ty", limit: 10).first?.context)
    #expect(context == EventContext([.appName: "Trendyol", .libraryName: "CoreTracker", .libraryVersion: "1.0.0"]))
    try await store.close()
  }

  /// A store made before the hashed event key gains the column at its next start, computed by the
  /// server, and a write finds the events stored before it by their ids (the key computed as they
  /// are read) and stores none of them again.
  @Test(.enabled(if: ClickHouseTestServer.url != nil))
  func olderStoresGainTheEventKeyAndFindTheirEvents() async throws {
    let (store, client, database) = try await Self.migratedStore()
    try await client.execute("ALTER TABLE \(database).events DROP COLUMN event_key")
    for index in 0..<3 {
      try await client.execute(
        """
        INSERT INTO \(database).events (app, event_id, name, kind, occurred_at, utc_offset_minutes, received_at,
          device_id, parameters) VALUES ('ty', 'e-\(index)', 'opened', 'event', \(1_700_000_000_000 + index), 0, 0, 'd-1', '{}')
        """)
    }

    try await store.migrate()
    let column = try await client.rows(
      "SELECT default_kind AS kind FROM system.columns WHERE database = '\(database)' AND table = 'events' "
        + "AND name = 'event_key'")
    #expect(column.first?["kind"].text == "MATERIALIZED")
    #expect(try await store.storedEventIDs(app: "ty", among: ["e-0", "e-2", "e-9"]) == ["e-0", "e-2"])
    var batch = StoreBatch()
    batch.events = (0..<4).map { ClickHouseStoreEdgeTests.event("e-\($0)", at: 1_700_000_000_000 + Int64($0)) }
    let again = try await store.write(batch)
    #expect(again.insertedEvents == 1 && again.duplicateEvents == 3)
    #expect(try await store.eventCount(app: "ty") == 4)
    try await store.close()
  }

  /// A statement ClickHouse refuses is a `StoreError` naming ClickHouse's message, never a crash.
  @Test(.enabled(if: ClickHouseTestServer.url != nil))
  func refusalsAreStoreErrors() async throws {
    let client = try ClickHouseClient(
      url: URL(string: ClickHouseTestServer.url!)!, database: "system", http: ClickHouseClient.http)
    await #expect(throws: StoreError.self) { try await client.rows("SELECT no_such_column FROM system.one") }
    #expect(throws: StoreError.self) {
      try ClickHouseClient(url: URL(string: "ftp://x")!, database: "system", http: ClickHouseClient.http)
    }
    #expect(throws: StoreError.self) {
      try ClickHouseClient(url: URL(string: "http://127.0.0.1:1")!, database: "no-dash", http: ClickHouseClient.http)
    }
  }
}

/// What the ClickHouse store writes into its statements holds at the edges: the largest batch the
/// group committer makes, and the days of times around midnight, leap days and before 1970.
@Suite("ClickHouse store edges")
struct ClickHouseStoreEdgeTests {
  static func event(_ id: String, at time: Int64, device: String = "device-1") -> StoredEvent {
    StoredEvent(
      app: "ty", eventID: id, name: "product_viewed", kind: "action", occurredAt: time, utcOffsetMinutes: 0,
      receivedAt: max(0, time), deviceID: device, userID: nil, sessionID: nil,
      context: EventContext([
        .appName: "Trendyol", .appVersion: "7.12.0", .appBuild: "712", .osName: "iOS", .osVersion: "17.4",
        .platform: "ios",
        .deviceModel: "iPhone15,2", .locale: "tr_TR", .libraryName: "CoreTracker/1.0.0",
      ]),
      parametersJSON: "{}")
  }

  static func store() async throws -> ClickHouseEventStore {
    let store = try ClickHouseEventStore(
      url: ClickHouseTestServer.url!, database: ClickHouseTestServer.uniqueDatabase())
    try await store.migrate()
    return store
  }

  /// 20,000 events with 120-character ids over 40 days in one batch (the group committer's largest):
  /// every lookup and repair statement fits, every event is stored once, and a resent batch stores
  /// nothing and leaves no duplicate.
  @Test(.enabled(if: ClickHouseTestServer.url != nil))
  func theLargestBatchIsStoredOnce() async throws {
    let store = try await Self.store()
    let padding = String(repeating: "x", count: 110)
    var batch = StoreBatch()
    batch.events = (0..<20_000).map {
      Self.event("\(padding)-\($0)", at: 1_790_000_000_000 + Int64($0) * 172_800_000 / 1_000)
    }
    let first = try await store.write(batch)
    #expect(first.insertedEvents == 20_000)
    let again = try await store.write(batch)
    #expect(again.insertedEvents == 0 && again.duplicateEvents == 20_000)
    #expect(try await store.eventCount(app: "ty") == 20_000)
    let raw = try await ClickHouseClient(url: store.url, database: store.database, http: ClickHouseClient.http)
      .rows("SELECT toInt64(count()) AS n FROM \(store.database).events").first?["n"].int
    #expect(raw == 20_000)
  }

  /// The store names the days of a batch itself (`day IN ('2024-02-29', …)`): for each edge time
  /// the event it stored is found again through that lookup, so both agree with ClickHouse's `day`.
  @Test(
    .enabled(if: ClickHouseTestServer.url != nil),
    arguments: [
      Int64(-5_000), 0, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 1_709_164_800_000,
      1_709_251_199_999, 4_107_542_400_000, 4_102_444_799_999,
    ])
  func daysAgreeWithClickHouse(time: Int64) async throws {
    let store = try await Self.store()
    var batch = StoreBatch()
    batch.events = [Self.event("e-\(time)", at: time)]
    #expect(try await store.write(batch).insertedEvents == 1)
    #expect(try await store.storedEventIDs(app: "ty", among: ["e-\(time)"]) == [ExactText("e-\(time)")])
    #expect(try await store.write(batch).duplicateEvents == 1)
  }
}
