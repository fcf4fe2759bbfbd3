import CollectorWire
public import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `trackerctl load`: a load generator for a collector's native batch API (`POST /v1/batch`).
///
/// Workers send batches of new events (fresh ids, so nothing is de-duplicated away) from a pool of
/// simulated devices as fast as the collector answers, up to a number of events; the summary gives
/// events/s and request latency percentiles.
public struct LoadGenerator: Sendable {
  /// What to send.
  public struct Plan: Sendable, Hashable {
    /// Events in all.
    public var events: Int
    /// Events per request (the collector accepts up to 500).
    public var batchSize: Int
    /// Requests in flight at once.
    public var concurrency: Int
    /// Distinct devices the events come from.
    public var devices: Int

    /// A plan; throws ``CommandError`` naming the first value out of range.
    public init(events: Int = 100_000, batchSize: Int = 100, concurrency: Int = 8, devices: Int = 1_000) throws {
      guard (1...1_000_000_000).contains(events) else { throw CommandError("--events must be 1 to 1000000000") }
      guard (1...500).contains(batchSize) else { throw CommandError("--batch must be 1 to 500 events") }
      guard (1...256).contains(concurrency) else { throw CommandError("--concurrency must be 1 to 256") }
      guard devices >= 1 else { throw CommandError("--devices must be at least 1") }
      self.events = events
      self.batchSize = batchSize
      self.concurrency = concurrency
      self.devices = devices
    }
  }

  /// What happened.
  public struct Summary: Sendable, Hashable {
    /// Events the collector accepted (2xx answers).
    public var accepted: Int
    /// Requests sent.
    public var requests: Int
    /// Failed requests by HTTP status (0 when the request got no answer).
    public var failures: [Int: Int]
    /// Wall time, seconds.
    public var seconds: Double
    /// Median request latency, ms.
    public var p50: Double
    /// 90th percentile of request latency, ms.
    public var p90: Double
    /// 99th percentile of request latency, ms.
    public var p99: Double
    /// The slowest request, ms.
    public var maximum: Double

    /// Accepted events per second.
    public var eventsPerSecond: Double { seconds > 0 ? Double(accepted) / seconds : 0 }

    /// The summary as printed.
    public var text: String {
      var lines = [
        String(
          format: "%d events accepted in %.2f s: %.0f events/s, %d requests", accepted, seconds, eventsPerSecond,
          requests),
        String(
          format: "latency per request: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms", p50, p90, p99, maximum),
      ]
      if !failures.isEmpty {
        lines.append(
          "failed requests: "
            + failures.sorted { $0.key < $1.key }.map {
              "\($0.value) × \($0.key == 0 ? "no answer" : "HTTP \($0.key)")"
            }
            .joined(separator: ", "))
      }
      return lines.joined(separator: "\n") + "\n"
    }
  }

  /// The collector's base URL.
  public let url: URL
  /// A write key of the app the events go to.
  public let key: String
  /// What to send.
  public let plan: Plan

  /// A generator for the collector at `url` with the write key `key`.
  public init(url: URL, key: String, plan: Plan) {
    self.url = url
    self.key = key
    self.plan = plan
  }

  /// Sends the plan; `progress` gets (events sent, events planned) after each request.
  public func run(progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> Summary {
    let batches = (plan.events + plan.batchSize - 1) / plan.batchSize
    let tally = Tally()
    let session = URLSession(configuration: .ephemeral)
    let endpoint = url.appendingPathComponent("v1/batch")
    let run = UUID().uuidString.prefix(8)
    let began = DispatchTime.now().uptimeNanoseconds
    try await withThrowingTaskGroup(of: Void.self) { group in
      for worker in 0..<min(plan.concurrency, batches) {
        group.addTask {
          var index = worker
          while index < batches {
            let count = min(plan.batchSize, plan.events - index * plan.batchSize)
            var request = URLRequest(url: endpoint)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
            let body = Data(Self.body(run: run, batch: index, count: count, devices: plan.devices))
            let sent = DispatchTime.now().uptimeNanoseconds
            var status = 0
            do {
              let (_, response) = try await session.upload(for: request, from: body)
              status = (response as? HTTPURLResponse)?.statusCode ?? 0
            } catch {
              status = 0
            }
            let latency = Double(DispatchTime.now().uptimeNanoseconds - sent) / 1_000_000
            let done = await tally.record(events: count, status: status, latency: latency)
            progress(done, plan.events)
            index += plan.concurrency
          }
        }
      }
      try await group.waitForAll()
    }
    session.finishTasksAndInvalidate()
    return await tally.summary(seconds: Double(DispatchTime.now().uptimeNanoseconds - began) / 1_000_000_000)
  }

  /// One native batch: `count` new events (ids unique to this run and batch) from devices of the pool.
  static func body(run: Substring, batch: Int, count: Int, devices: Int) -> [UInt8] {
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    let names = ["product_viewed", "screen_view", "add_to_cart", "search", "purchase"]
    let context = EventContext([
      .appName: "LoadTest", .appVersion: "1.0.0", .appBuild: "1", .osName: "iOS", .osVersion: "18.1", .platform: "ios",
      .deviceModel: "iPhone16,1", .locale: "en_US", .timeZone: "UTC", .libraryName: "CoreTracker",
      .libraryVersion: "1.0.0",
    ])
    let events = (0..<count).map { offset in
      let serial = batch &* 31 &+ offset
      var event = EventWriter(
        id: "load-\(run)-\(batch)-\(offset)", name: names[serial % names.count], kind: "action", timestamp: now,
        utcOffsetMinutes: 0)
      event.parameter("product_id", string: "p\(serial % 500)")
      event.parameter("position", int: Int64(offset))
      return event.finish(
        anonymousId: "load-device-\((batch &* 7919 &+ offset) % devices)", userId: nil, sessionId: Int64(batch))[...]
    }
    return BatchWriter.batch(sentAt: now, context: BatchWriter.context(context), events: events)
  }

  /// Counts across workers.
  actor Tally {
    var accepted = 0
    var sent = 0
    var requests = 0
    var failures: [Int: Int] = [:]
    var latencies: [Double] = []

    func record(events: Int, status: Int, latency: Double) -> Int {
      requests += 1
      sent += events
      latencies.append(latency)
      if (200..<300).contains(status) { accepted += events } else { failures[status, default: 0] += 1 }
      return sent
    }

    func summary(seconds: Double) -> Summary {
      let sorted = latencies.sorted()
      func percentile(_ share: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * share).rounded(.up)) - 1)]
      }
      return Summary(
        accepted: accepted, requests: requests, failures: failures, seconds: seconds, p50: percentile(0.5),
        p90: percentile(0.9), p99: percentile(0.99), maximum: sorted.last ?? 0)
    }
  }
}
