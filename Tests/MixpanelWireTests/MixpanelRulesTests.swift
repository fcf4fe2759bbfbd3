import MixpanelWire
import Testing

/// Every documented Mixpanel limit, table-driven.
@Suite("Mixpanel rules")
struct MixpanelRulesTests {
  @Test(
    "$insert_id: 1 to 36 bytes of letters, digits and -",
    arguments: [
      ("0190a0b0-0000-7000-8000-000000000001", true), ("abc", true), (String(repeating: "a", count: 36), true),
      ("", false), (String(repeating: "a", count: 37), false), ("has_underscore", false), ("ümlaut", false),
      ("with space", false),
    ]
  )
  func insertIDs(id: String, valid: Bool) {
    #expect((MixpanelRules.checkInsertID(id) == nil) == valid)
  }

  @Test("event ids become valid insert ids")
  func insertIDFromEventID() {
    #expect(
      MixpanelRules.insertID(from: "0190A0B0-0000-7000-8000-000000000001") == "0190A0B0-0000-7000-8000-000000000001")
    #expect(MixpanelRules.insertID(from: "sa_item:42/ü") == "saitem42")
    #expect(MixpanelRules.checkInsertID(MixpanelRules.insertID(from: String(repeating: "x", count: 99))) == nil)
  }

  @Test(
    "time: not before 1971, not more than an hour ahead",
    arguments: [
      (Int64(31_536_000_000), true), (31_535_999_999, false), (1_800_003_600_000, true), (1_800_003_600_001, false),
    ]
  )
  func times(time: Int64, valid: Bool) {
    #expect((MixpanelRules.checkTime(time, now: 1_800_000_000_000) == nil) == valid)
  }

  @Test("fewer than 255 properties; strings cut at 255 characters; 2000 events and 10 MB per request")
  func sizes() {
    #expect(MixpanelRules.checkPropertyCount(254) == nil)
    #expect(MixpanelRules.checkPropertyCount(255) != nil)
    #expect(MixpanelRules.truncated(String(repeating: "ş", count: 255)) == (String(repeating: "ş", count: 255), false))
    #expect(MixpanelRules.truncated(String(repeating: "ş", count: 256)) == (String(repeating: "ş", count: 255), true))
    #expect(MixpanelLimits.maximumEventsPerRequest == 2000)
    #expect(MixpanelLimits.maximumRequestBytes == 10_000_000)
  }

  @Test(
    "429, 502 and 503 are retried; 400 never",
    arguments: [(429, true), (502, true), (503, true), (400, false), (500, false), (413, false)])
  func retries(status: Int, retried: Bool) {
    #expect(MixpanelRules.isRetried(status: status) == retried)
  }
}
