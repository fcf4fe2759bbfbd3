// The cost of `track` on the caller's thread, beside two floors measured in the same run.
//
//   swift package benchmark --target TrackBenchmarks      (from Tools/Benchmarks)
//
// Every benchmark tracks (or builds) the same event: five parameters, routed to three services.
import Benchmark
import CoreTracker
import Foundation

/// The benchmarked event: a product view with five typed parameters.
enum BenchEvent: CoreTrackable {
  case productViewed(id: String, brand: String, price: Double, quantity: Int, inStock: Bool)

  var name: String { "product_viewed" }
  var kind: EventKind { .screenView }
  var parameters: EventParameters {
    switch self {
    case .productViewed(let id, let brand, let price, let quantity, let inStock):
      [
        "product_id": .string(id), "brand": .string(brand), "price": .double(price), "quantity": .int(quantity),
        "in_stock": .bool(inStock),
      ]
    }
  }
}

/// A purchase of a 10-item order: the event a checkout tracks.
enum OrderEvent: CoreTrackable {
  case purchased(CommerceOrder)

  var name: String { "purchase" }
  var parameters: EventParameters {
    switch self {
    case .purchased(let order): order.parameters
    }
  }
}

/// The order (built once: the app holds its cart already; `track` wraps it in the event).
let order = CommerceOrder(
  transactionID: "TY-4F2A9C01", currency: "TRY",
  items: (0..<10).map { index in
    CommerceItem(
      id: "SKU-\(1000 + index)", name: "Product \(index)", brand: "Koston", categories: ["Shoes", "Sneakers"],
      variant: "42", price: 19.99 + Double(index), quantity: 1 + index % 3, index: index)
  }, tax: 18, shipping: 29.99, coupon: "WELCOME10")

/// Blocks the worker in `receive` until released, so a measured loop sees the caller's thread only.
final class GateService: TrackerService, @unchecked Sendable {
  // @unchecked: the semaphores are thread-safe; `first` is only touched by the worker thread.
  let id = ServiceID("gate")
  let entered = DispatchSemaphore(value: 0)
  let release = DispatchSemaphore(value: 0)
  private var first = true
  func receive(_ event: TrackedEvent) {
    if first {
      first = false
      entered.signal()
      release.wait()
    }
  }
}

@inline(never)
func makeEvent(_ index: Int) -> BenchEvent {
  .productViewed(id: "SKU-1234", brand: "Koston", price: 19.99, quantity: index & 7, inStock: true)
}

let services: [any TrackerService] = [NoOpService(id: ServiceID("log")), NoOpService(id: ServiceID("collector"))]

let benchmarks: @Sendable () -> Void = {
  let configuration = Benchmark.Configuration(
    metrics: [.wallClock, .mallocCountTotal, .throughput],
    scalingFactor: .kilo,
    maxDuration: .seconds(3),
    maxIterations: 2_000
  )

  // Floor 1: building the same event and its uniform serialisation (name + five parameters).
  Benchmark("floor: build event + parameters", configuration: configuration) { benchmark in
    for index in benchmark.scaledIterations {
      let event = makeEvent(index)
      blackHole(event.name)
      blackHole(event.parameters)
    }
  }

  // Floor 2: appending the event to an array under a lock (the least a queue can do).
  Benchmark("floor: append under a lock", configuration: configuration) { benchmark in
    let lock = NSLock()
    var buffer: [any CoreTrackable] = []
    buffer.reserveCapacity(benchmark.scaledIterations.count)
    benchmark.startMeasurement()
    for index in benchmark.scaledIterations {
      lock.lock()
      buffer.append(makeEvent(index))
      lock.unlock()
    }
    benchmark.stopMeasurement()
    blackHole(buffer)
  }

  // track() on the caller's thread: the worker is parked in the gate service during the loop, so
  // only the caller's work (and its allocations) is measured; routing to three services happens
  // after the measurement. Each with and without the crash journal (the event's parameters read and
  // copied into the mapped journal file on the caller's thread, before `track` returns), for a
  // five-parameter event and a 10-item order (the order is the app's already; the event wraps it).
  for journaled in [false, true] {
    let suffix = journaled ? ", crash journal" : ""
    Benchmark("track (caller's thread), 3 services" + suffix, configuration: configuration) { benchmark in
      await measureCallerThread(benchmark, journaled: journaled) { tracker, index in tracker.track(makeEvent(index)) }
    }
    Benchmark("track (caller's thread), a 10-item order, 3 services" + suffix, configuration: configuration) {
      benchmark in
      await measureCallerThread(benchmark, journaled: journaled) { tracker, _ in
        tracker.track(OrderEvent.purchased(order))
      }
    }
  }

  Benchmark("track + pipeline + fan-out, a 10-item order, 3 services", configuration: configuration) {
    benchmark in
    let tracker = Tracker(
      services: services + [NoOpService(id: ServiceID("firebase"))],
      configuration: TrackerConfiguration(emitsSessionEvents: false, queueCapacity: 1_000_000)
    )
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
      tracker.track(OrderEvent.purchased(order))
    }
    await tracker.flush()
    benchmark.stopMeasurement()
  }

  // track() with the worker running: caller and worker share the two cores, and the malloc count
  // includes the worker's (enrichment, pipeline, one envelope per service).
  Benchmark("track + pipeline + fan-out, 3 services", configuration: configuration) { benchmark in
    let tracker = Tracker(
      services: services + [NoOpService(id: ServiceID("firebase"))],
      configuration: TrackerConfiguration(emitsSessionEvents: false, queueCapacity: 1_000_000)
    )
    benchmark.startMeasurement()
    for index in benchmark.scaledIterations {
      tracker.track(makeEvent(index))
    }
    await tracker.flush()
    benchmark.stopMeasurement()
  }
}

/// Times `track` on the caller's thread with the worker parked in a gate service.
func measureCallerThread(
  _ benchmark: Benchmark, journaled: Bool, track: (Tracker, Int) -> Void
) async {
  let folder = FileManager.default.temporaryDirectory.appendingPathComponent("track-journal-\(UUID().uuidString)")
  defer { try? FileManager.default.removeItem(at: folder) }
  let gate = GateService()
  let tracker = Tracker(
    services: services + [gate],
    configuration: TrackerConfiguration(
      emitsSessionEvents: false, queueCapacity: 1_000_000,
      journal: journaled ? TrackerJournal(directory: folder) : nil)
  )
  track(tracker, 0)
  gate.entered.wait()
  benchmark.startMeasurement()
  for index in benchmark.scaledIterations {
    track(tracker, index)
  }
  benchmark.stopMeasurement()
  gate.release.signal()
  await tracker.shutdown()
}
