// Cost per event of each service's encoding with its limit enforcement, beside the plain
// CollectorWire encoding, in one run; and the bytes each event costs on the wire.
//
//   swift package benchmark --target EncodeBenchmarks      (from Tools/Benchmarks)
import Benchmark
import CollectorService
import CoreTracker
import FirebaseService
import Foundation
import MixpanelService
import ServiceSupport

/// A realistic product event: 5 parameters, a signed-in user, a session, a user property.
let events: [TrackedEvent] = (0..<25).map { index in
  let now = Date(timeIntervalSince1970: 1_800_000_000 + Double(index))
  return TrackedEvent(
    id: EventID(high: UInt64(now.timeIntervalSince1970 * 1000) << 16, low: UInt64(index)), name: "view_item",
    kind: .screenView,
    parameters: [
      "item_id": .string("SKU-\(index)"), "item_brand": "Koston", "price": .double(19.99),
      "quantity": .int(index % 5), "in_stock": .bool(true),
    ],
    timestamp: now,
    context: TrackingContext(
      appName: "Trendyol", appVersion: "5.12.0", appBuild: "5120", osName: "iOS", osVersion: "17.4.1",
      platform: "iOS", deviceModel: "iPhone15,2", locale: "tr_TR", timeZone: "Europe/Istanbul"),
    anonymousID: "6f1c2a8e-0b7d-4c55-9a0e-3d2f4b6a8c91", userID: "u-1001",
    session: TrackingSession(id: 1_800_000_000, startedAt: now, number: 1), userProperties: ["tier": "gold"]
  )
}

/// The same events as purchases of a 10-item order (currency, value, tax, shipping, coupon, items).
let orders: [TrackedEvent] = events.enumerated().map { index, event in
  var order = event
  order.name = "purchase"
  order.kind = .action
  order.parameters =
    CommerceOrder(
      transactionID: "TY-\(index)", currency: "TRY",
      items: (0..<10).map { line in
        CommerceItem(
          id: "SKU-\(1000 + line)", name: "Product \(line)", brand: "Koston", categories: ["Shoes", "Sneakers"],
          variant: "42", price: 19.99 + Double(line), quantity: 1 + line % 3, index: line)
      }, tax: 18, shipping: 29.99, coupon: "WELCOME10"
    ).parameters
  return order
}

let wireBytes = BenchmarkMetric.custom("wire bytes per event (25-event request)")

let benchmarks: @Sendable () -> Void = {
  let configuration = Benchmark.Configuration(
    metrics: [.wallClock, .mallocCountTotal, wireBytes], maxDuration: .seconds(3)
  )
  // One iteration encodes 25 events and builds their request: ns and mallocs per event = ÷ 25.
  // The encoders live as long as their service: each is made and primed with one event (its context
  // encoded once) before the measurement starts, so the figures are the steady state a tracker sees.
  // The same three run on flat 5-parameter events and on purchases of a 10-item order.
  for (what, batch) in [("events", events), ("orders of 10 items", orders)] {
    let collector = CollectorEventEncoder()
    encoding(what, "CollectorService, native batch (baseline)", batch, configuration, collector) { encoder, batch in
      CollectorEventEncoder.requestBody(batch.map { encoder.encode($0) }, sentAt: Date())
    }
    let firebase = FirebaseEventEncoder(limits: .repair)
    encoding(what, "FirebaseService, GA4 MP + limits", batch, configuration, firebase) { encoder, batch in
      FirebaseEventEncoder.requestBody(batch.compactMap { encoder.encode($0) })
    }
    let mixpanel = MixpanelEventEncoder(limits: .repair)
    encoding(what, "MixpanelService, /import + limits", batch, configuration, mixpanel) { encoder, batch in
      MixpanelEventEncoder.requestBody(batch.compactMap { encoder.encode($0) })
    }
  }
  // What the steady state leaves out: a new context (an app update, a locale or time-zone change)
  // is encoded once, through the wire type's Codable conformance.
  Benchmark("a context change: CollectorService encodes the new context once", configuration: configuration) {
    benchmark in
    for _ in benchmark.scaledIterations {
      var encoder = CollectorEventEncoder()
      blackHole(encoder.encode(events[0]))
    }
  }
}

/// A benchmark of one service's encoding: `request` encodes `batch` with the encoder and builds its
/// request body. The encoder is made and primed with one event (its context encoded once) before the
/// measurement starts, as it lives as long as its service.
func encoding<Encoder: Sendable>(
  _ what: String, _ service: String, _ batch: [TrackedEvent], _ configuration: Benchmark.Configuration,
  _ encoder: Encoder, request: @escaping @Sendable (inout Encoder, [TrackedEvent]) -> [UInt8]
) {
  Benchmark("encode \(batch.count) \(what): \(service)", configuration: configuration) { benchmark in
    var encoder = encoder
    _ = request(&encoder, [batch[0]])
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
      let body = request(&encoder, batch)
      benchmark.measurement(wireBytes, body.count / batch.count)
      blackHole(body)
    }
  }
}
