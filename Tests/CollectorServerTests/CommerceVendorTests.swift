import CollectorReports
import CollectorServer
import CollectorStore
import Foundation
import GA4Wire
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MixpanelWire
import NIOCore
import Testing

/// The vendors' own commerce examples, sent unchanged: Google's `purchase`, `add_to_cart` and
/// `refund` (GA4 events reference, Measurement Protocol tab) and Mixpanel's list properties
/// ("Supported Properties Data Type"), stored and counted by the revenue report.
@Suite("Commerce through the vendor endpoints")
struct CommerceVendorTests {
  static let stanTee =
    #"{"item_id":"SKU_12345","item_name":"Stan and Friends Tee","affiliation":"Google Merchandise Store","coupon":"SUMMER_FUN","discount":2.22,"index":0,"item_brand":"Google","item_category":"Apparel","item_category2":"Adult","item_category3":"Shirts","item_category4":"Crew","item_category5":"Short sleeve","item_list_id":"related_products","item_list_name":"Related Products","item_variant":"green","location_id":"ChIJIQBpAG2ahYAR_6128GcTUEo","price":10.01,"quantity":3}"#
  static let greyTee =
    #"{"item_id":"SKU_12346","item_name":"Google Grey Women's Tee","affiliation":"Google Merchandise Store","coupon":"SUMMER_FUN","discount":3.33,"index":1,"item_brand":"Google","item_category":"Apparel","item_category2":"Adult","item_category3":"Shirts","item_category4":"Crew","item_category5":"Short sleeve","item_list_id":"related_products","item_list_name":"Related Products","item_variant":"gray","location_id":"ChIJIQBpAG2ahYAR_6128GcTUEo","price":21.01,"promotion_id":"P_12345","promotion_name":"Summer Sale","quantity":2}"#

  /// (event name, params) as Google documents them.
  static let googleExamples: [(String, String)] = [
    (
      "purchase",
      #"{"transaction_id":"T_12345","value":72.05,"tax":3.60,"shipping":5.99,"currency":"USD","coupon":"SUMMER_SALE","customer_type":"new","items":[\#(stanTee),\#(greyTee)]}"#
    ),
    ("add_to_cart", #"{"currency":"USD","value":30.03,"items":[\#(stanTee)]}"#),
    (
      "refund",
      #"{"currency":"USD","transaction_id":"T_12345","value":30.03,"coupon":"SUMMER_FUN","shipping":3.33,"tax":1.11,"items":[\#(stanTee)]}"#
    ),
  ]

  static func body(_ name: String, _ params: String) -> [UInt8] {
    let micros = Int64(Date().timeIntervalSince1970 * 1_000_000)
    return Array(
      #"{"app_instance_id":"a1b2","events":[{"name":"\#(name)","params":\#(params),"timestamp_micros":\#(micros)}]}"#
        .utf8)
  }

  @Test(arguments: googleExamples)
  func googlesExampleIsValidAndStored(name: String, params: String) async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (checked, answer) = try await VendorRouteTests.ga4(client, Self.body(name, params), debug: true)
      #expect(checked == .ok)
      #expect(
        try JSONDecoder().decode(GA4ValidationResponse.self, from: Data(answer.utf8)).violations.isEmpty, "\(answer)")
      let (status, text) = try await VendorRouteTests.ga4(client, Self.body(name, params))
      #expect(status == .noContent, "\(text)")
    }
    let stored = try await collector.store.events(app: "ty", limit: 10)
    #expect(stored.map(\.name) == [name])
    #expect(stored.first?.parametersJSON.contains(#""item_id":"SKU_12345""#) == true)
  }

  @Test func thePurchaseAndTheRefundAreCountedByTheRevenueReport() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for (name, params) in Self.googleExamples {
        let (status, _) = try await VendorRouteTests.ga4(client, Self.body(name, params))
        #expect(status == .noContent)
      }
      let (status, json, _) = try await ReportRouteTests.get(client, "/v1/reports/revenue?app=ty")
      #expect(status == .ok, "\(json)")
      let revenue = try JSONDecoder().decode(Revenue.self, from: Data(json.utf8))
      #expect(revenue.current.count == 1)
      #expect(revenue.current.first?.currency == "USD" && revenue.current.first?.orders == 1)
      #expect(abs((revenue.current.first?.net ?? 0) - 42.02) < 1e-9)
      let (itemsStatus, items, _) = try await ReportRouteTests.get(client, "/v1/reports/top-items?app=ty&brand=Google")
      #expect(itemsStatus == .ok)
      let top = try JSONDecoder().decode(TopItems.self, from: Data(items.utf8))
      #expect(top.rows.map(\.item) == ["SKU_12346", "SKU_12345"])
      #expect(top.rows.map(\.units) == [2, 3])
    }
  }

  static let refusedItems: [(String, String, String, GA4ValidationCode)] = [
    (
      "item without id or name", #"{"currency":"USD","items":[{"price":1}]}"#, "events[0].params.items[0]",
      .valueRequired
    ),
    (
      "201 items",
      #"{"currency":"USD","items":[\#(Array(repeating: #"{"item_id":"a"}"#, count: 201).joined(separator: ","))]}"#,
      "events[0].params.items", .exceededMaxEntities
    ),
    ("value without currency", #"{"value":5,"items":[{"item_id":"a"}]}"#, "events[0].params.currency", .valueRequired),
    (
      "long item value", #"{"currency":"USD","items":[{"item_id":"\#(String(repeating: "x", count: 101))"}]}"#,
      "events[0].params.items[0].item_id", .valueOutOfBounds
    ),
    (
      "nested items", #"{"currency":"USD","items":[{"item_id":"a","items":[{"item_id":"b"}]}]}"#,
      "events[0].params.items[0].items", .valueInvalid
    ),
    (
      "negative quantity", #"{"currency":"USD","items":[{"item_id":"a","quantity":-1}]}"#,
      "events[0].params.items[0].quantity", .valueInvalid
    ),
    (
      "a list outside items", #"{"currency":"USD","products":[{"item_id":"a"}]}"#, "events[0].params.products",
      .valueInvalid
    ),
  ]

  @Test(arguments: refusedItems)
  func aBadItemIsNamedAndItsEventDropped(label: String, params: String, field: String, code: GA4ValidationCode)
    async throws
  {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (_, text) = try await VendorRouteTests.ga4(client, Self.body("add_to_cart", params), debug: true)
      let answer = try JSONDecoder().decode(GA4ValidationResponse.self, from: Data(text.utf8))
      #expect(answer.violations.map(\.fieldPath) == [field], "\(label): \(text.prefix(300))")
      #expect(answer.violations.map(\.code) == [code], "\(label)")
    }
    #expect(try await collector.store.eventCount(app: "ty") == 0)
  }

  @Test func mixpanelListPropertiesAreStoredAsSent() async throws {
    let collector = try await makeCollector()
    let time = Int64(Date().timeIntervalSince1970 * 1000)
    let cart =
      #"[{"Brand":"Puma","Category":"Jacket","Price":30},{"Brand":"Adidas","Category":"Hats","Price":15}]"#
    let body =
      #"[{"event":"Purchase","properties":{"distinct_id":"u-1","time":\#(time),"$insert_id":"c-1","Cart":\#(cart),"tags":["a","b"]}}]"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, answer) = try await VendorRouteTests.mixpanel(client, body)
      #expect(status == .ok && answer.numRecordsImported == 1)
    }
    let stored = try #require(try await collector.store.events(app: "ty", limit: 1).first)
    #expect(stored.parametersJSON.contains(#""Cart":[{"Brand":"Puma","Category":"Jacket","Price":30}"#))
    #expect(stored.parametersJSON.contains(#""tags":["a","b"]"#))
  }

  /// The order the Trendyol checkout sends to Mixpanel (`Order Completed`, title case; Docs/Commerce.md)
  /// and the same order in Segment's e-commerce spec both reach revenue and top items.
  @Test func mixpanelAndSegmentOrdersAreCountedAsPurchases() async throws {
    let collector = try await makeCollector()
    let time = Int64(Date().timeIntervalSince1970 * 1000)
    let products =
      #"[{"Product ID":"P1","Name":"Air Runner","Brand":"Koston","Category":"Shoes > Sneakers","Price":1000.0,"Quantity":1}]"#
    let mixpanel =
      #"[{"event":"Order Completed","properties":{"distinct_id":"u-1","time":\#(time),"$insert_id":"o-1","Order ID":"TY-1","Currency":"TRY","Revenue":1019.99,"Tax":165.0,"Shipping":29.99,"Coupon":"WELCOME10","Products":\#(products)}}]"#
    let segment =
      #"{"type":"track","anonymousId":"a-2","event":"Order Completed","properties":{"order_id":"SG-1","total":30,"revenue":25,"currency":"TRY","products":[{"product_id":"P9","name":"Cap","price":12.5,"quantity":2}]}}"#
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let (status, _) = try await VendorRouteTests.mixpanel(client, mixpanel)
      #expect(status == .ok)
      #expect(try await SegmentRouteTests.post(client, "/v1/batch", #"{"batch":[\#(segment)]}"#).0 == .ok)
      let (_, json, _) = try await ReportRouteTests.get(client, "/v1/reports/revenue?app=ty")
      let revenue = try JSONDecoder().decode(Revenue.self, from: Data(json.utf8))
      #expect(revenue.current.map(\.currency) == ["TRY"])
      #expect(revenue.current.first?.orders == 2)
      #expect(abs((revenue.current.first?.gross ?? 0) - 1049.99) < 1e-9, "\(json)")
      let (_, items, _) = try await ReportRouteTests.get(client, "/v1/reports/top-items?app=ty")
      let top = try JSONDecoder().decode(TopItems.self, from: Data(items.utf8))
      #expect(top.rows.map(\.item) == ["P1", "P9"])
      #expect(top.rows.map(\.units) == [1, 2])
    }
  }
}
