import CollectorServer
import CollectorStore
import Foundation
import GA4Wire
import HTTPTypes
import HummingbirdTesting
import Testing

/// Google's documented Measurement Protocol bodies, sent as Google shows them, and what each keeps.
///
/// Sources (read 2026-11-27): "Validate events"
/// (developers.google.com/analytics/devguides/collection/protocol/ga4/validating-events),
/// "Send user properties" (…/protocol/ga4/user-properties), the request reference's `consent`
/// (…/protocol/ga4/reference: `ad_user_data` and `ad_personalization`, `GRANTED` or `DENIED`).
/// Each body's `APP_INSTANCE_ID` placeholder is a real-looking id, and a time is added where a resend
/// must be recognised (without one, the time is the arrival's, as on GA4).
@Suite("GA4's documented bodies")
struct GA4DocumentedBodiesTests {
  /// Google's `_badEventName` example: the validation server names the list (`events`) and the index
  /// in its description, with `NAME_INVALID`.
  @Test func googlesBadEventNameExampleIsAnsweredAsGoogleAnswers() async throws {
    let collector = try await makeCollector()
    let body = #"{"app_instance_id":"cbd7e7d3c7e9b2a1","events":[{"name":"_badEventName","params":{}}]}"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await VendorRouteTests.ga4(client, Array(body.utf8), debug: true)
      #expect(status == .ok)
      let answer = try JSONDecoder().decode(GA4ValidationResponse.self, from: Data(text.utf8))
      #expect(answer.validationMessages.map(\.fieldPath) == ["events"])
      #expect(answer.validationMessages.map(\.validationCode) == ["NAME_INVALID"])
      #expect(answer.validationMessages.first?.description.contains("index [0]") == true, "\(text)")
      #expect(answer.validationMessages.first?.description.contains("_badEventName") == true, "\(text)")
    }
  }

  /// `user_properties` and `consent` are kept: a `user_properties` event (kind `identify`) holds the
  /// properties and a `consent` event holds the consent, at the request's first event's time, on the
  /// request's device and user. Resent, nothing is stored twice.
  @Test(arguments: [
    // "Send user properties": the Firebase example, its event given a time.
    (
      #"{"app_instance_id":"cbd7e7d3c7e9b2a1","user_properties":{"customer_tier":{"value":"premium"}},"events":[{"name":"add_payment_info","timestamp_micros":MICROS}]}"#,
      #"{"customer_tier":"premium"}"#, String?.none
    ),
    // The reference's consent, with the legacy `non_personalized_ads` beside it.
    (
      #"{"app_instance_id":"cbd7e7d3c7e9b2a1","user_id":"u-42","consent":{"ad_user_data":"GRANTED","ad_personalization":"DENIED"},"non_personalized_ads":true,"user_properties":{"tier":{"value":3},"beta":{"value":true}},"events":[{"name":"login","params":{"method":"Google"},"timestamp_micros":MICROS}]}"#,
      #"{"beta":true,"tier":3}"#,
      #"{"ad_personalization":"DENIED","ad_user_data":"GRANTED","non_personalized_ads":true}"#
    ),
  ])
  func userPropertiesAndConsentAreKept(template: String, properties: String, consent: String?) async throws {
    let collector = try await makeCollector()
    let micros = Int64(Date().timeIntervalSince1970 * 1_000) * 1_000 - 60_000_000
    let body = Array(template.replacingOccurrences(of: "MICROS", with: String(micros)).utf8)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for _ in 0..<2 {
        let (status, text) = try await VendorRouteTests.ga4(client, body)
        #expect(status == .noContent, "\(text)")
      }
    }
    let stored = try await collector.store.events(app: "ty", limit: 10)
    let state = try #require(stored.first { $0.name == "user_properties" })
    #expect(state.kind == "identify" && state.parametersJSON == properties)
    #expect(state.deviceID == "cbd7e7d3c7e9b2a1" && state.occurredAt == micros / 1_000)
    #expect(stored.first { $0.name == "consent" }?.parametersJSON == consent)
    #expect(stored.count == (consent == nil ? 2 : 3), "\(stored.map(\.name))")
    if consent != nil { #expect(stored.allSatisfy { $0.userID == "u-42" }) }
  }

  /// A boolean parameter — an item's custom `in_stock: true`, an event's `flag: false` — is stored as
  /// a boolean, as GA4 accepts it.
  @Test func booleansAreStoredAsBooleans() async throws {
    let collector = try await makeCollector()
    let micros = Int64(Date().timeIntervalSince1970 * 1_000_000)
    let body =
      #"{"app_instance_id":"cbd7e7d3c7e9b2a1","events":[{"name":"view_item","timestamp_micros":\#(micros),"params":{"flag":false,"items":[{"item_id":"SKU_12345","item_name":"Stan and Friends Tee","in_stock":true}]}}]}"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await VendorRouteTests.ga4(client, Array(body.utf8))
      #expect(status == .noContent, "\(text)")
    }
    let stored = try await collector.store.events(app: "ty", limit: 10)
    #expect(stored.map(\.name) == ["view_item"])
    #expect(stored.first?.parametersJSON.contains(#""flag":false"#) == true)
    #expect(stored.first?.parametersJSON.contains(#""in_stock":true"#) == true, "\(stored)")
  }

  /// A user property value GA4 cannot take (U+0000, which no store holds) refuses the request whole,
  /// and the request waits in the quarantine with the reason.
  @Test func aUserPropertyNoStoreCanHoldIsQuarantinedWithItsRequest() async throws {
    let collector = try await makeCollector()
    let micros = Int64(Date().timeIntervalSince1970 * 1_000_000)
    let body =
      #"{"app_instance_id":"cbd7e7d3c7e9b2a1","user_properties":{"tier":{"value":"a\u0000b"}},"events":[{"name":"login","timestamp_micros":\#(micros)}]}"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, text) = try await VendorRouteTests.ga4(client, Array(body.utf8))
      #expect(status == .ok && text.contains("user_properties.tier"), "\(text)")
    }
    #expect(try await collector.store.eventCount(app: "ty") == 0)
    let quarantined = try await collector.store.quarantined(app: "ty", limit: 10, includeReplayed: false)
    #expect(quarantined.first?.reasons == ["user_properties.tier: must not contain U+0000"])
  }
}
