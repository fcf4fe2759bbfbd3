import GA4Wire
import Testing

/// Every documented GA4 limit and reserved name, table-driven.
@Suite("GA4 rules")
struct GA4RulesTests {
  @Test(
    "event names",
    arguments: [
      ("select_content", nil), ("screen_view", nil), ("a", nil), (String(repeating: "a", count: 40), nil),
      ("", GA4ValidationCode.valueRequired), ("1st_event", .nameInvalid), ("_private", .nameInvalid),
      ("moment-like", .nameInvalid), ("beğeni", .nameInvalid), ("has space", .nameInvalid),
      (String(repeating: "a", count: 41), .valueOutOfBounds), ("firebase_custom", .nameReserved),
      ("google_thing", .nameReserved), ("ga_session", .nameReserved), ("session_start", .nameReserved),
      ("first_open", .nameReserved), ("user_engagement", .nameReserved), ("app_remove", .nameReserved),
      ("error", .nameReserved),
    ] as [(String, GA4ValidationCode?)]
  )
  func eventNames(name: String, expected: GA4ValidationCode?) {
    #expect(GA4Rules.checkName(name, kind: .event, path: "events[0].name")?.code == expected)
  }

  @Test("every reserved event name is refused as an event and allowed as a parameter")
  func reservedEventNames() {
    #expect(GA4Limits.reservedEventNames.count == 32)
    for name in GA4Limits.reservedEventNames {
      #expect(GA4Rules.checkName(name, kind: .event, path: "")?.code == .nameReserved, "\(name)")
      #expect(GA4Rules.checkName(name, kind: .parameter, path: "") == nil, "\(name)")
    }
  }

  @Test(
    "parameter and user property names",
    arguments: [
      ("item_id", GA4Rules.NameKind.parameter, nil),
      ("firebase_conversion", .parameter, GA4ValidationCode.nameReserved),
      ("ga_x", .parameter, .nameReserved), (String(repeating: "p", count: 41), .parameter, .valueOutOfBounds),
      ("membership", .userProperty, nil), (String(repeating: "u", count: 24), .userProperty, nil),
      (String(repeating: "u", count: 25), .userProperty, .valueOutOfBounds), ("user_id", .userProperty, .nameReserved),
      ("first_open_time", .userProperty, .nameReserved), ("first_visit_time", .userProperty, .nameReserved),
      ("last_deep_link_referrer", .userProperty, .nameReserved),
      ("first_open_after_install", .userProperty, .nameReserved), ("google_ads", .userProperty, .nameReserved),
    ] as [(String, GA4Rules.NameKind, GA4ValidationCode?)]
  )
  func otherNames(name: String, kind: GA4Rules.NameKind, expected: GA4ValidationCode?) {
    #expect(GA4Rules.checkName(name, kind: kind, path: "x")?.code == expected)
  }

  @Test("values: 100 characters per parameter, 36 per user property")
  func values() {
    #expect(GA4Rules.checkParameterValue(String(repeating: "v", count: 100), path: "p") == nil)
    #expect(GA4Rules.checkParameterValue(String(repeating: "v", count: 101), path: "p")?.code == .valueOutOfBounds)
    #expect(GA4Rules.checkParameterValue(String(repeating: "ğ", count: 100), path: "p") == nil)
    #expect(GA4Rules.checkUserPropertyValue(String(repeating: "v", count: 36), path: "u") == nil)
    #expect(GA4Rules.checkUserPropertyValue(String(repeating: "v", count: 37), path: "u")?.code == .valueOutOfBounds)
  }

  @Test("counts: 25 events, 25 parameters, 25 user properties")
  func counts() {
    for limit in [
      GA4Limits.maximumEventsPerRequest, GA4Limits.maximumParametersPerEvent, GA4Limits.maximumUserProperties,
    ] {
      #expect(limit == 25)
      #expect(GA4Rules.checkCount(limit, limit: limit, what: "events", path: "events") == nil)
      #expect(
        GA4Rules.checkCount(limit + 1, limit: limit, what: "events", path: "events")?.code == .exceededMaxEntities)
    }
    #expect(GA4Limits.requestBodyLimit == 130_000)
  }

  @Test("the 72-hour window")
  func window() {
    let now: Int64 = 1_800_000_000_000_000
    let hour: Int64 = 3_600_000_000
    #expect(GA4Rules.checkTimestamp(now - 72 * hour, now: now, path: "t") == nil)
    #expect(GA4Rules.checkTimestamp(now - 72 * hour - 1, now: now, path: "t")?.code == .valueInvalid)
    #expect(GA4Rules.checkTimestamp(now + hour, now: now, path: "t")?.code == .valueInvalid)
  }

  @Test(
    "repair: replace, prefix, rename reserved prefixes, truncate",
    arguments: [
      ("moment-like", GA4Rules.NameKind.event, "moment_like"), ("1st open", .event, "e_1st_open"),
      ("firebase_custom", .event, "x_custom"),
      (String(repeating: "a", count: 50), .event, String(repeating: "a", count: 40)),
      ("Sepete Ekle", .event, "Sepete_Ekle"), ("---", .event, nil), ("session_start", .event, "x_session_start"),
      ("error", .event, "x_error"),
      ("membership_level_of_the_user", .userProperty, "membership_level_of_the_"),
    ] as [(String, GA4Rules.NameKind, String?)]
  )
  func repair(name: String, kind: GA4Rules.NameKind, expected: String?) {
    #expect(GA4Rules.repairedName(name, kind: kind) == expected)
  }
}
