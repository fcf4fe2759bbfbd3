import AsyncHTTPClient
import CollectorClickHouse
import CollectorStore
import Foundation
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
