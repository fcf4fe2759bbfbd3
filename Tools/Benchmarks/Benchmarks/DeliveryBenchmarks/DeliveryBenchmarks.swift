// Delivery: events per second from `track` to delivered on a loopback server (batched, durable
// outbox) against one request per event, bytes on the wire per event with and without gzip, and
// the outbox append cost.
//
//   swift package benchmark --target DeliveryBenchmarks      (from Tools/Benchmarks)
import Benchmark
import CollectorService
import CoreTracker
import Delivery
import Foundation
import Hummingbird
import Logging

/// A loopback collector stand-in: reads each body, counts its bytes, answers 200 at once.
final class LoopbackServer: Sendable {
  let port: Int
  private let bytes = ByteCounter()
  private let task: Task<Void, any Error>

  var receivedBytes: Int { bytes.total }

  init() async throws {
    let counter = bytes
    let router = Router()
    router.post("**") { request, _ -> Response in
      let body = try await request.body.collect(upTo: 16 << 20)
      counter.add(body.readableBytes)
      return Response(status: .ok)
    }
    let port = PortHolder()
    let application = Application(
      router: router,
      configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
      onServerRunning: { port.set($0.localAddress?.port ?? 0) },
      logger: Logger(label: "loopback") { _ in SwiftLogNoOpLogHandler() }
    )
    task = Task { try await application.runService(gracefulShutdownSignals: []) }
    while port.value == nil { try await Task.sleep(nanoseconds: 5_000_000) }
    self.port = port.value!
  }

  func stop() async {
    task.cancel()
    _ = try? await task.value
  }
}

final class ByteCounter: @unchecked Sendable {
  // @unchecked: `count` is only touched under `lock`.
  private let lock = NSLock()
  private var count = 0
  func add(_ value: Int) { lock.withLock { count += value } }
  var total: Int { lock.withLock { count } }
}

final class PortHolder: @unchecked Sendable {
  // @unchecked: `port` is only touched under `lock`.
  private let lock = NSLock()
  private var port: Int?
  func set(_ value: Int) { lock.withLock { port = value } }
  var value: Int? { lock.withLock { port } }
}

enum ProductEvent: CoreTrackable {
  case viewed(id: String, brand: String, price: Double, quantity: Int, inStock: Bool)
  var name: String { "product_viewed" }
  var kind: EventKind { .screenView }
  var parameters: EventParameters {
    switch self {
    case .viewed(let id, let brand, let price, let quantity, let inStock):
      [
        "product_id": .string(id), "brand": .string(brand), "price": .double(price), "quantity": .int(quantity),
        "in_stock": .bool(inStock),
      ]
    }
  }
}

extension BenchmarkMetric {
  static let wireBytesPerEvent = BenchmarkMetric.custom(
    "Wire bytes / event", polarity: .prefersSmaller, useScalingFactor: false
  )
}

func temporaryDirectory() -> URL {
  FileManager.default.temporaryDirectory.appendingPathComponent("delivery-bench-\(UUID().uuidString)")
}

/// Tracks `events` through a tracker and CollectorService to the loopback server and waits until
/// every one is delivered; reports bytes on the wire per event.
func deliverEndToEnd(_ benchmark: Benchmark, events: Int, batchSize: Int, gzip: Bool) async throws {
  let server = try await LoopbackServer()
  let directory = temporaryDirectory()
  defer { try? FileManager.default.removeItem(at: directory) }
  let collector = try CollectorService(
    endpoint: URL(string: "http://127.0.0.1:\(server.port)")!, writeKey: "bench", directory: directory,
    outbox: OutboxConfiguration(maximumBytes: 64 << 20, maximumRecords: 1_000_000, segmentBytes: 4 << 20),
    batchSize: batchSize, gzip: gzip, policy: FlushPolicy(count: min(batchSize, 500), interval: nil)
  )
  let tracker = Tracker(
    services: [collector], configuration: TrackerConfiguration(emitsSessionEvents: false, queueCapacity: events)
  )
  benchmark.startMeasurement()
  for index in 0..<events {
    tracker.track(
      ProductEvent.viewed(id: "SKU-\(index % 1000)", brand: "Koston", price: 19.99, quantity: index & 7, inStock: true))
  }
  await tracker.flush()
  benchmark.stopMeasurement()
  precondition(collector.statistics()?.delivered == events, "not everything was delivered")
  benchmark.measurement(.wireBytesPerEvent, server.receivedBytes / events)
  await server.stop()
}

let benchmarks: @Sendable () -> Void = {
  let endToEnd = Benchmark.Configuration(
    metrics: [.wallClock, .throughput, .wireBytesPerEvent], scalingFactor: .kilo, maxDuration: .seconds(10),
    maxIterations: 5
  )

  // 20,000 events per iteration (20 × the kilo scaling): events/s is the throughput × 1000 / 20.
  Benchmark("deliver: batched (2500), gzip, outbox", configuration: endToEnd) { benchmark in
    try await deliverEndToEnd(benchmark, events: 20_000, batchSize: 2500, gzip: true)
  }
  Benchmark("deliver: batched (2500), plain, outbox", configuration: endToEnd) { benchmark in
    try await deliverEndToEnd(benchmark, events: 20_000, batchSize: 2500, gzip: false)
  }
  Benchmark("deliver: one request per event, outbox", configuration: endToEnd) { benchmark in
    try await deliverEndToEnd(benchmark, events: 2_000, batchSize: 1, gzip: false)
  }

  // The outbox append: a ~200-byte record copied into the mapped segment (no system call; the
  // pages reach the disk on the delivery queue's 1 s msync).
  Benchmark(
    "outbox append (200 B record)",
    configuration: .init(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(3))
  ) { benchmark in
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let outbox = try Outbox(
      directory: directory, configuration: OutboxConfiguration(maximumBytes: 64 << 20, maximumRecords: 10_000_000)
    )
    let record = [UInt8](repeating: 0x61, count: 200)
    benchmark.startMeasurement()
    for index in benchmark.scaledIterations {
      blackHole(outbox.append(kind: 2, timestamp: Int64(index), payload: record))
    }
    benchmark.stopMeasurement()
  }

  // track() on the caller's thread with CollectorService (outbox, JSON encoding) behind it and the
  // worker running: what the caller pays while delivery works.
  Benchmark(
    "track (caller's thread) with CollectorService",
    configuration: .init(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(3))
  ) { benchmark in
    let server = try await LoopbackServer()
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let collector = try CollectorService(
      endpoint: URL(string: "http://127.0.0.1:\(server.port)")!, writeKey: "bench", directory: directory,
      outbox: OutboxConfiguration(maximumBytes: 64 << 20, maximumRecords: 1_000_000, segmentBytes: 4 << 20)
    )
    let tracker = Tracker(
      services: [collector], configuration: TrackerConfiguration(emitsSessionEvents: false, queueCapacity: 1_000_000)
    )
    benchmark.startMeasurement()
    for index in benchmark.scaledIterations {
      tracker.track(
        ProductEvent.viewed(id: "SKU-1234", brand: "Koston", price: 19.99, quantity: index & 7, inStock: true))
    }
    benchmark.stopMeasurement()
    await tracker.flush()
    await server.stop()
  }
}
