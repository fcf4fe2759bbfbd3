import CollectorStore
import CollectorWire
import Foundation
import TestSupport
import Testing

/// One suite, every engine: what `EventStore` promises, checked against a real SQLite file and a
/// real PostgreSQL server.
@Suite("EventStore conformance")
struct StoreConformanceTests {
  @Test("PostgreSQL is configured when running in CI")
  func postgresInCI() {
    if PostgresTestServer.isCI {
      #expect(PostgresTestServer.url != nil, "CI must export COLLECTOR_TEST_POSTGRES_URL (.ci/postgres)")
    }
  }

  @Test("ClickHouse is configured when running in CI")
  func clickHouseInCI() {
    if PostgresTestServer.isCI {
      #expect(ClickHouseTestServer.url != nil, "CI must export COLLECTOR_TEST_CLICKHOUSE_URL (.ci/clickhouse)")
    }
  }

  /// The declarations every engine reads and writes events and counters by: each field has its
  /// column, once, and a row reads back from its own columns' values.
  @Test func anEventReadsBackFromItsDeclaredColumns() {
    let event = Rows.event("0190a0b0-0000-7000-8000-000000000009", user: "user-1", session: 42)
    let values = Dictionary(uniqueKeysWithValues: StoredEvent.columns.map { ($0.name, $0.value(event)) })
    #expect(StoredEvent { values[$0.name]! } == event)
    #expect(values.count == StoredEvent.columns.count)
    #expect(StoredEvent.columns.filter(\.isNullable).map(\.name) == ["user_id", "session_id"])
    let anonymous = Rows.event("0190a0b0-0000-7000-8000-000000000010")
    #expect(StoredEvent { $0.value(anonymous) } == anonymous)
    let counter = Rows.counter("opened", first: 1_700_000_000_000, count: 3)
    #expect(StoredCounter { $0.value(counter) } == counter)
    #expect(StoredCounter.columns.map(\.name).suffix(ContextField.allCases.count) == ContextField.columns[...])
  }

  @Test("migrations are idempotent and versioned", arguments: Engine.available)
  func migrations(engine: Engine) async throws {
    let store = try await engine.open()
    try await store.migrate()
    try await store.migrate()
    #expect(try await store.schemaVersion() == engine.schemaVersion)
    try await store.ping()
    try await store.close()
  }

  @Test("events round-trip with every column", arguments: Engine.available)
  func roundTrip(engine: Engine) async throws {
    let store = try await engine.open()
    let first = Rows.event("0190a0b0-0000-7000-8000-000000000001", user: "user-9", session: 1_700_000_000_000)
    let second = Rows.event("0190a0b0-0000-7000-8000-000000000002", at: 1_700_000_000_100, parameters: "{}")
    let summary = try await store.write(StoreBatch(events: [second, first]))
    #expect(summary == WriteSummary(insertedEvents: 2))
    let stored = try await store.events(app: "ty", limit: 10)
    #expect(stored.count == 2)
    for (got, expected) in zip(stored, [first, second]) {
      var comparable = got
      comparable.parametersJSON = expected.parametersJSON
      #expect(comparable == expected)
      #expect(Rows.json(got.parametersJSON) == Rows.json(expected.parametersJSON))
    }
    try await store.close()
  }

  @Test("a retried batch stores nothing twice", arguments: Engine.available)
  func deduplication(engine: Engine) async throws {
    let store = try await engine.open()
    let a = Rows.event("id-a")
    let b = Rows.event("id-b")
    let c = Rows.event("id-c")
    #expect(try await store.write(StoreBatch(events: [a, b])) == WriteSummary(insertedEvents: 2))
    #expect(
      try await store.write(StoreBatch(events: [a, b, c])) == WriteSummary(insertedEvents: 1, duplicateEvents: 2))
    // The same id in another app is another event.
    #expect(try await store.write(StoreBatch(events: [Rows.event("id-a", app: "dl")])).insertedEvents == 1)
    // The same id twice in one batch is stored once.
    #expect(try await store.write(StoreBatch(events: [Rows.event("id-d"), Rows.event("id-d")])).insertedEvents == 1)
    // A batch of two apps: one id in both is two events, and once more in one of them a duplicate.
    let mixed = [Rows.event("id-e", app: "dl"), Rows.event("id-e"), Rows.event("id-e", app: "dl")]
    #expect(try await store.write(StoreBatch(events: mixed)) == WriteSummary(insertedEvents: 2, duplicateEvents: 1))
    #expect(try await store.eventCount(app: "ty") == 5)
    #expect(try await store.eventCount(app: nil) == 7)
    try await store.close()
  }

  @Test("counter totals are keyed by id; a resent total keeps the larger count", arguments: Engine.available)
  func counters(engine: Engine) async throws {
    let store = try await engine.open()
    let rows = [
      Rows.counter("Foregrounded", first: 1_000, count: 3), Rows.counter("Foregrounded", first: 2_000, count: 1),
      Rows.counter("Foregrounded", device: "device-2", first: 1_000, count: 5),
    ]
    #expect(try await store.write(StoreBatch(counters: rows)) == WriteSummary(insertedCounters: 3))
    #expect(try await store.write(StoreBatch(counters: rows)) == WriteSummary(duplicateCounters: 3))
    let stored = try await store.counters(app: "ty")
    #expect(stored.map(\.count).reduce(0, +) == 9)
    #expect(Set(stored) == Set(rows))
    // The first total resent after two more increments (the reply was lost): replaced, not added.
    var grown = rows[0]
    grown.count = 5
    #expect(
      try await store.write(StoreBatch(counters: [grown, rows[1]]))
        == WriteSummary(insertedCounters: 1, duplicateCounters: 1))
    #expect(try await store.counters(app: "ty").map(\.count).reduce(0, +) == 11)
    // An older, smaller copy never lowers it.
    #expect(try await store.write(StoreBatch(counters: [rows[0]])) == WriteSummary(duplicateCounters: 1))
    #expect(try await store.counters(app: "ty").map(\.count).reduce(0, +) == 11)
    try await store.close()
  }

  @Test("storedEventIDs names exactly the stored ids of the app", arguments: Engine.available)
  func storedEventIDs(engine: Engine) async throws {
    let store = try await engine.open()
    _ = try await store.write(StoreBatch(events: [Rows.event("s-1"), Rows.event("s-2"), Rows.event("o-1", app: "dl")]))
    #expect(try await store.storedEventIDs(app: "ty", among: ["s-1", "s-3", "o-1", "s-2"]) == ["s-1", "s-2"])
    #expect(try await store.storedEventIDs(app: "ty", among: []) == [])
    try await store.close()
  }

  /// `é` as one code point and as `e` with a combining accent: equal Swift strings, two ids to every
  /// database. A write that took them for one would acknowledge an event it never stored.
  @Test("ids that differ only in their bytes are two events, each kept once", arguments: Engine.available)
  func idsToldApartByTheirBytes(engine: Engine) async throws {
    let store = try await engine.open()
    let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
    #expect(composed == decomposed && !composed.hasSameBytes(as: decomposed))
    let batch = StoreBatch(events: [Rows.event(composed), Rows.event(decomposed)])
    #expect(try await store.write(batch) == WriteSummary(insertedEvents: 2))
    #expect(
      try await store.storedEventIDs(app: "ty", among: [decomposed, composed])
        == [ExactText(composed), ExactText(decomposed)])
    #expect(try await store.write(batch) == WriteSummary(duplicateEvents: 2))
    // One stored, the other new: the new one is stored, the stored one is not stored again.
    let other = try await engine.open()
    _ = try await other.write(StoreBatch(events: [Rows.event(composed)]))
    #expect(try await other.write(batch) == WriteSummary(insertedEvents: 1, duplicateEvents: 1))
    #expect(try await other.eventCount(app: "ty") == 2)
    #expect(Set(try await store.events(app: "ty", limit: 10).map { ExactText($0.eventID) }).count == 2)
    try await store.close()
    try await other.close()
  }

  @Test("a failing write stores nothing of its batch", arguments: Engine.available)
  func atomicWrite(engine: Engine) async throws {
    let store = try await engine.open()
    let batch = StoreBatch(events: [Rows.event("good-1"), Rows.event("bad", parameters: "{not json")])
    await #expect(throws: StoreError.self) { try await store.write(batch) }
    #expect(try await store.eventCount(app: nil) == 0)
    try await store.close()
  }

  @Test("erasure removes one person's events and counters only", arguments: Engine.available)
  func erasure(engine: Engine) async throws {
    let store = try await engine.open()
    _ = try await store.write(
      StoreBatch(
        events: [
          Rows.event("e1", device: "d1"), Rows.event("e2", device: "d1", user: "u1"), Rows.event("e3", device: "d2"),
          Rows.event("e4", device: "d3", user: "u1"), Rows.event("e5", app: "dl", device: "d1"),
        ],
        counters: [
          Rows.counter("c", device: "d1", first: 1, count: 1), Rows.counter("c", device: "d2", first: 1, count: 1),
        ]
      )
    )
    let byDevice = try #require(ErasureSubject(app: "ty", deviceID: "d1", userID: nil))
    #expect(try await store.erase(byDevice) == ErasureReport(events: 2, counters: 1, devices: 1))
    let byUser = try #require(ErasureSubject(app: "ty", deviceID: nil, userID: "u1"))
    #expect(try await store.erase(byUser) == ErasureReport(events: 1, counters: 0, devices: 1))
    #expect(try await store.events(app: "ty", limit: 10).map(\.eventID) == ["e3"])
    #expect(try await store.eventCount(app: "dl") == 1)
    #expect(try await store.counters(app: "ty").map(\.deviceID) == ["d2"])
    #expect(ErasureSubject(app: "ty", deviceID: "", userID: nil) == nil)
    try await store.close()
  }

  /// A person on two devices (one with events before sign-in), and on a device first used by
  /// someone else: erasing the person takes both of their devices whole, counters included, and
  /// only their own events on the shared one.
  @Test("erasing a person takes every device they own and their events on a shared one", arguments: Engine.available)
  func erasureByPerson(engine: Engine) async throws {
    let store = try await engine.open()
    _ = try await store.write(
      StoreBatch(
        events: [
          Rows.event("phone-anonymous", at: 1_700_000_000_000 + 1_000, device: "phone"),
          Rows.event("phone-signed-in", at: 1_700_000_000_000 + 2_000, device: "phone", user: "ayse"),
          Rows.event("tablet-signed-in", at: 1_700_000_000_000 + 3_000, device: "tablet", user: "ayse"),
          Rows.event("tablet-after", at: 1_700_000_000_000 + 4_000, device: "tablet"),
          Rows.event("shared-first", at: 1_700_000_000_000 + 1_000, device: "shared", user: "mehmet"),
          Rows.event("shared-ayse", at: 1_700_000_000_000 + 5_000, device: "shared", user: "ayse"),
          Rows.event("shared-anonymous", at: 1_700_000_000_000 + 6_000, device: "shared"),
          Rows.event("other", at: 1_700_000_000_000 + 1_000, device: "other"),
          Rows.event("dl-phone", app: "dl", at: 1_700_000_000_000 + 1_000, device: "phone", user: "ayse"),
        ],
        counters: [
          Rows.counter("c", device: "phone", first: 1, count: 2),
          Rows.counter("c", device: "shared", first: 1, count: 1),
        ]
      )
    )
    let person = try #require(ErasureSubject(app: "ty", deviceID: nil, userID: "ayse"))
    #expect(try await store.erase(person) == ErasureReport(events: 5, counters: 1, devices: 3))
    let left = try await store.events(app: "ty", limit: 10).map(\.eventID).sorted()
    #expect(left == ["other", "shared-anonymous", "shared-first"])
    #expect(try await store.counters(app: "ty").map(\.deviceID) == ["shared"])
    #expect(try await store.eventCount(app: "dl") == 1)
    // Nothing left of the person: erasing again finds nothing.
    #expect(try await store.erase(person) == ErasureReport())
    try await store.close()
  }

  /// Two people and two devices whose ids are equal Swift strings but not the same bytes: erasing
  /// one takes nothing of the other, and leaves nothing of itself (`é`, `ë` as one code point and
  /// with a combining accent).
  @Test("erasure tells people and devices apart by their bytes", arguments: Engine.available)
  func erasureByBytes(engine: Engine) async throws {
    let store = try await engine.open()
    let (phone, twin) = ("caf\u{E9}", "cafe\u{301}")
    let (zoe, other) = ("zo\u{EB}", "zoe\u{308}")
    _ = try await store.write(
      StoreBatch(events: [
        Rows.event("a-1", at: 1_700_000_000_000 + 1_000, device: phone, user: zoe),
        Rows.event("a-2", at: 1_700_000_000_000 + 2_000, device: phone),
        Rows.event("b-1", at: 1_700_000_000_000 + 1_000, device: twin, user: other),
        Rows.event("b-2", at: 1_700_000_000_000 + 2_000, device: twin),
        // A shared device, the other person's first: erasing `zoe` takes only her event on it.
        Rows.event("s-1", at: 1_700_000_000_000 + 1_000, device: "shared", user: other),
        Rows.event("s-2", at: 1_700_000_000_000 + 2_000, device: "shared", user: zoe),
        Rows.event("s-3", at: 1_700_000_000_000 + 3_000, device: "shared"),
      ]))
    let person = try #require(ErasureSubject(app: "ty", deviceID: nil, userID: zoe))
    #expect(try await store.erase(person) == ErasureReport(events: 3, devices: 2))
    let left = try await store.events(app: "ty", limit: 10)
    #expect(left.map(\.eventID).sorted() == ["b-1", "b-2", "s-1", "s-3"])
    #expect(left.filter { $0.eventID.hasPrefix("b") }.allSatisfy { $0.deviceID.hasSameBytes(as: twin) })
    let device = try #require(ErasureSubject(app: "ty", deviceID: twin, userID: nil))
    #expect(try await store.erase(device) == ErasureReport(events: 2, devices: 1))
    #expect(try await store.eventCount(app: "ty") == 2)
    try await store.close()
  }

  @Test("retention prunes per app and by default", arguments: Engine.available)
  func prune(engine: Engine) async throws {
    let store = try await engine.open()
    _ = try await store.write(
      StoreBatch(events: [
        Rows.event("old-ty", at: 1_000), Rows.event("new-ty", at: 9_000), Rows.event("old-dl", app: "dl", at: 1_000),
        Rows.event("mid-dl", app: "dl", at: 5_000),
      ])
    )
    // ty keeps everything after 2,000; other apps (dl) keep everything after 6,000.
    let deleted = try await store.prune(PruneCutoffs(defaultCutoff: 6_000, perApp: ["ty": 2_000]))
    #expect(deleted == 3)
    #expect(try await store.events(app: "ty", limit: 10).map(\.eventID) == ["new-ty"])
    #expect(try await store.eventCount(app: "dl") == 0)
    #expect(try await store.prune(PruneCutoffs(defaultCutoff: nil)) == 0)
    try await store.close()
  }

  @Test("keys are stored hashed, found, listed and revoked", arguments: Engine.available)
  func keys(engine: Engine) async throws {
    let store = try await engine.open()
    let write = KeyRecord(id: "ctw_abcdefgh", app: "ty", scope: .write, hash: "h1", createdAt: 1_000)
    let admin = KeyRecord(id: "cta_abcdefgh", app: "*", scope: .admin, hash: "h2", createdAt: 2_000)
    try await store.saveKey(write)
    try await store.saveKey(admin)
    try await store.saveKey(write)
    #expect(try await store.key(hash: "h1") == write)
    #expect(try await store.key(hash: "missing") == nil)
    #expect(try await store.keys() == [admin, write])
    #expect(try await store.revokeKey(id: "ctw_abcdefgh", at: 3_000))
    #expect(try await store.revokeKey(id: "nope", at: 3_000) == false)
    #expect(try await store.key(hash: "h1")?.revokedAt == 3_000)
    try await store.close()
  }

  @Test("saved views are stored per app, edited in place, listed by name and deleted", arguments: Engine.available)
  func savedViews(engine: Engine) async throws {
    let store = try await engine.open()
    let search = SavedView(
      id: "0123456789abcdef", app: "ty", name: "Purchases on iOS", path: "/dashboard/search",
      query: "app=ty&event=purchase&platform=iOS", createdBy: "ctr_reader", createdAt: 1_000, updatedAt: 1_000)
    let retention = SavedView(
      id: "fedcba9876543210", app: "ty", name: "Retention by week", path: "/dashboard/retention", query: "app=ty",
      createdBy: "cta_admin", createdAt: 2_000, updatedAt: 2_000)
    let other = SavedView(
      id: "00000000000000aa", app: "dl", name: "A", path: "/", query: "app=dl", createdBy: "cta_admin", createdAt: 1,
      updatedAt: 1)
    for view in [search, retention, other] { try await store.saveView(view) }
    #expect(try await store.savedViews(app: "ty") == [search, retention])
    var renamed = search
    renamed.name = "Z: purchases"
    renamed.query += "&to=2026-11-30"
    renamed.updatedAt = 3_000
    try await store.saveView(renamed)
    #expect(try await store.savedView(id: search.id) == renamed, "an edit replaces the view")
    #expect(try await store.savedViews(app: "ty") == [retention, renamed])
    #expect(try await store.deleteView(id: retention.id, at: 4_000))
    #expect(try await store.deleteView(id: retention.id, at: 5_000) == false)
    #expect(try await store.savedViews(app: "ty") == [renamed])
    #expect(try await store.savedView(id: retention.id) == nil)
    #expect(try await store.savedViews(app: "dl") == [other])
    try await store.close()
  }

  @Test("chart notes are stored per app, read by time range and deleted", arguments: Engine.available)
  func annotations(engine: Engine) async throws {
    let store = try await engine.open()
    let notes = [
      Annotation(id: "00000000000000a1", app: "ty", time: 2_000, text: "Campaign", createdBy: "ctr_r", createdAt: 5),
      Annotation(id: "00000000000000a2", app: "ty", time: 1_000, text: "Outage", createdBy: "cta_a", createdAt: 6),
      Annotation(id: "00000000000000a3", app: "ty", time: 3_000, text: "Later", createdBy: "cta_a", createdAt: 7),
      Annotation(id: "00000000000000a4", app: "dl", time: 1_500, text: "Other app", createdBy: "cta_a", createdAt: 8),
    ]
    for note in notes { try await store.addAnnotation(note) }
    #expect(try await store.annotations(app: "ty", from: 1_000, to: 3_000) == [notes[1], notes[0]])
    #expect(try await store.annotation(id: "00000000000000a3") == notes[2])
    #expect(try await store.deleteAnnotation(id: "00000000000000a2", at: 9))
    #expect(try await store.deleteAnnotation(id: "00000000000000a2", at: 10) == false)
    #expect(try await store.annotations(app: "ty", from: 0, to: 10_000) == [notes[0], notes[2]])
    #expect(try await store.annotations(app: "dl", from: 0, to: 10_000) == [notes[3]])
    try await store.close()
  }

  @Test("concurrent writers lose and duplicate nothing", arguments: Engine.available)
  func concurrentWrites(engine: Engine) async throws {
    let store = try await engine.open()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for writer in 0..<8 {
        group.addTask {
          for batch in 0..<10 {
            let events = (0..<50).map { Rows.event("w\(writer)-b\(batch)-e\($0)") }
            _ = try await store.write(StoreBatch(events: events))
            // Every writer also retries its previous batch.
            if batch > 0 {
              let retry = (0..<50).map { Rows.event("w\(writer)-b\(batch - 1)-e\($0)") }
              #expect(try await store.write(StoreBatch(events: retry)).duplicateEvents == 50)
            }
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(try await store.eventCount(app: "ty") == 8 * 10 * 50)
    try await store.close()
  }
}
