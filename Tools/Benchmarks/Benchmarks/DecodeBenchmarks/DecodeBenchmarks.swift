// Decoding a 100-event native batch: BatchDecoder against Foundation's JSONDecoder, in one run.
//
//   swift package benchmark --target DecodeBenchmarks      (from Tools/Benchmarks)
import Benchmark
import CollectorWire
import Foundation

/// A realistic 100-event batch, encoded once.
let body: [UInt8] = {
  let context = EventContext([
    .appName: "Trendyol", .appVersion: "5.12.0", .appBuild: "5120", .osName: "iOS", .osVersion: "17.4.1",
    .platform: "iOS", .deviceModel: "iPhone15,2", .locale: "tr_TR", .timeZone: "Europe/Istanbul",
    .libraryName: "CoreTracker", .libraryVersion: "0.1.0",
  ])
  let events = (0..<100).map { index in
    CollectorEvent(
      id: UUID().uuidString.lowercased(), name: "product_viewed", kind: "screen_view",
      timestamp: 1_800_000_000_000 + Int64(index), utcOffsetMinutes: 180,
      parameters: [
        "product_id": .string("SKU-\(index)"), "brand": .string("Koston"), "price": .double(19.99),
        "quantity": .int(Int64(index % 5)), "in_stock": .bool(true),
      ],
      anonymousId: "6f1c2a8e-0b7d-4c55-9a0e-3d2f4b6a8c91", userId: "u-1001", sessionId: 1_800_000_000
    )
  }
  return [UInt8](try! JSONEncoder().encode(CollectorBatch(sentAt: 1_800_000_001_000, context: context, events: events)))
}()

let benchmarks: @Sendable () -> Void = {
  let configuration = Benchmark.Configuration(
    metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(3)
  )
  // One iteration decodes 100 events: events/s = throughput × 100.
  Benchmark("decode 100 events: BatchDecoder", configuration: configuration) { _ in
    blackHole(try BatchDecoder.decode(body))
  }
  Benchmark("decode 100 events: JSONDecoder (baseline)", configuration: configuration) { _ in
    blackHole(try JSONDecoder().decode(CollectorBatch.self, from: Data(body)))
  }
}
