import CollectorService
import CollectorWire
import CoreTracker
import Delivery
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The crash helper's path: built beside the test binary.
private var helperURL: URL {
  URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("CrashHelper")
}

private func readProgress(_ url: URL) -> Int {
  guard let data = try? Data(contentsOf: url), data.count >= 8 else { return 0 }
  return Int(data.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) })
}

/// The index the helper was inside `track` for when it died, if it died inside `track` (the
/// progress file's second word equals the first): that event may or may not have been journaled.
private func readInterrupted(_ url: URL) -> Int? {
  guard let data = try? Data(contentsOf: url), data.count >= 16 else { return nil }
  let (next, began) = data.withUnsafeBytes {
    ($0.loadUnaligned(as: Int64.self), $0.loadUnaligned(fromByteOffset: 8, as: Int64.self))
  }
  return next == began ? Int(began) : nil
}

/// A last run of the helper on `outbox`: adopts what the killed runs left and delivers it.
private func deliverWhatWaits(_ outbox: URL, _ server: URL, environment: [String: String]? = nil) async throws {
  let flush = try ChildProcess(
    helperURL.path, arguments: [outbox.path, server.absoluteString, "--flush"], environment: environment)
  #expect(await flush.exit() == .exited(0))
}

/// The numbered probes the server received, by event id (an id sent again counts once), the
/// `session_start` ids, and how many probes arrived in all (duplicates included).
private func receivedProbes(_ server: TestHTTPServer) throws -> (
  byID: [String: Int], sessionStarts: Set<String>, received: Int
) {
  var byID: [String: Int] = [:]
  var sessionStarts = Set<String>()
  var received = 0
  for request in server.requests where request.uri.hasPrefix("/v1/batch") {
    let batch = try JSONDecoder().decode(CollectorBatch.self, from: Data(request.body))
    for event in batch.events {
      if event.name == SessionEvent.start { sessionStarts.insert(event.id) }
      guard case .int(let index) = event.parameters["i"] else { continue }
      received += 1
      byID[event.id] = Int(index)
    }
  }
  return (byID, sessionStarts, received)
}

/// The heavy durability tests, one after the other (each takes a core for up to a minute).
@Suite("Crash safety and outage bounds", .serialized)
struct CrashTests {
  /// Tracks numbered events in a helper process killed with SIGKILL at random moments, 20 times;
  /// then a last run delivers what waits. With the tracker's journal, every event `track` returned
  /// for arrives, none under two ids, and the session survives the kills (one `session_start`).
  @Test(.timeLimit(.minutes(3)))
  func killNineTwentyTimesLosesNothing() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TestFiles.unique("crash")
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let outbox = directory.appendingPathComponent("outbox")
    let progressFile = directory.appendingPathComponent("progress")

    var random = SystemRandomNumberGenerator()
    var returned = 0
    var windows: [Range<Int>] = []
    for _ in 0..<20 {
      let process = try ChildProcess(
        helperURL.path, arguments: [outbox.path, server.url.absoluteString, String(returned), progressFile.path])
      try await Task.sleep(nanoseconds: UInt64.random(in: 80_000_000...400_000_000, using: &random))
      process.send(SIGKILL)
      #expect(await process.exit() == .signalled(SIGKILL))
      let reached = max(returned, readProgress(progressFile))
      windows.append(returned..<reached)
      returned = reached
    }

    try await deliverWhatWaits(outbox, server.url)

    // De-duplicate by event id; then no index may appear under two ids.
    let (byID, sessionStarts, received) = try receivedProbes(server)
    let batches = server.requests.filter { $0.uri.hasPrefix("/v1/batch") }
    let requests = batches.count
    let bodies = Set(batches.map(\.body))
    let indices = byID.values.sorted()
    // Only a run's first index may arrive under two ids: a kill between `track` returning and the
    // helper storing its progress makes the next run track that index again (the harness, not the
    // tracker, tracked it twice).
    let doubled = Set(Dictionary(grouping: indices, by: { $0 }).filter { $0.value.count > 1 }.keys)
    #expect(doubled.isSubset(of: Set(windows.map(\.upperBound))), "an event arrived under two ids: \(doubled)")
    let arrived = Set(indices)
    let lost = (0..<returned).filter { !arrived.contains($0) }
    let lostPerKill = windows.map { run in lost.filter { run.contains($0) }.count }
    print(
      "crash test: 20 kills, \(returned) events returned by track, \(arrived.count) arrived "
        + "(\(received - arrived.count) duplicate deliveries removed by id), \(lost.count) lost, "
        + "per kill: \(lostPerKill), session starts: \(sessionStarts.count), \(requests) requests, "
        + "\(requests - bodies.count) of them sent again whole"
    )
    #expect(returned > 1000)
    #expect(lost.isEmpty, "lost: \(lost.prefix(20))")
    // The index the last run was tracking when it was killed may arrive too: its `track` wrote it
    // to the journal, and the kill came before the helper stored its progress (no later run tracks
    // it again). Nothing past it was ever tracked.
    #expect(arrived.isSubset(of: Set(0...returned)), "past \(returned): \(arrived.filter { $0 > returned }.prefix(20))")
    #expect(sessionStarts.count == 1)
  }

  /// A producer tracking 20,000 events/s into an outbox of about 2,800 events, against a collector
  /// that answers each request of 250 events after 50 ms (about 5,000 events/s): the outbox fills
  /// within a fraction of a second and the journal holds the rest. The producer is killed with
  /// SIGKILL at random moments (some within its first milliseconds), 15 times or more, each run going on
  /// from where the last one's `track` returned, up to 40,000 events; a last run delivers what
  /// waits. Every event arrives exactly once (by id), nothing is dropped, one `session_start`.
  @Test(.timeLimit(.minutes(4)))
  func aProducerFasterThanASlowCollectorKilledAtRandomLosesNothing() async throws {
    let server = try await TestHTTPServer.start { _ in TestResponse(delay: 0.05) }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
    let outbox = directory.url.appendingPathComponent("outbox")
    let progressFile = directory.url.appendingPathComponent("progress")
    let total = 40_000
    var environment = ProcessInfo.processInfo.environment
    environment["CRASH_HELPER_SMALL_OUTBOX"] = "1"
    environment["CRASH_HELPER_LIMIT"] = String(total)

    var random = SystemRandomNumberGenerator()
    var returned = 0
    var starts = Set<Int>()
    var kills = 0
    // Fifteen kills, and more (up to thirty) while the producer has not gone past 10,000: on a loaded
    // machine (the CI's parallel tests) a run can take longer to start than its pause.
    for run in 0..<30 where run < 15 || returned <= 10_000 {
      starts.insert(returned)
      let process = try ChildProcess(
        helperURL.path, arguments: [outbox.path, server.url.absoluteString, String(returned), progressFile.path],
        environment: environment)
      let early = run % 4 == 1
      if !early && returned < total {
        // A late kill's pause counts from the run's first tracked event, not from its spawn.
        let started = ContinuousClock.now
        while readProgress(progressFile) <= returned, ContinuousClock.now - started < .seconds(20) {
          try await Task.sleep(nanoseconds: 1_000_000)
        }
      }
      let pause =
        early
        ? UInt64.random(in: 2_000_000...30_000_000, using: &random)
        : UInt64.random(in: 30_000_000...250_000_000, using: &random)  // from the first event: ~3,000 a run
      try await Task.sleep(nanoseconds: pause)
      process.send(SIGKILL)
      kills += 1
      await process.exit()
      returned = max(returned, readProgress(progressFile))
    }
    let output = Pipe()
    let flush = try ChildProcess(
      helperURL.path, arguments: [outbox.path, server.url.absoluteString, "--flush"], environment: environment,
      output: .pipe(output))
    let summary = String(decoding: await output.fileHandleForReading.readToEndOffThePool(), as: UTF8.self)
    #expect(await flush.exit() == .exited(0), "\(summary)")
    #expect(summary.contains("dropped=[]") && summary.contains("tracker-dropped=0"), "\(summary)")

    let (byID, sessionStarts, received) = try receivedProbes(server)
    let indices = byID.values.sorted()
    let arrived = Set(indices)
    let lost = (0..<returned).filter { !arrived.contains($0) }
    print(
      "backpressure crash test: \(kills) kills, \(returned) events returned by track, \(arrived.count) arrived "
        + "(\(received - arrived.count) duplicate deliveries removed by id), \(lost.count) lost, "
        + "session starts: \(sessionStarts.count); last run: \(summary)")
    #expect(returned > 10_000)
    // Only a run's first index may arrive under two ids (see the kill -9 test above).
    let doubled = Set(Dictionary(grouping: indices, by: { $0 }).filter { $0.value.count > 1 }.keys)
    #expect(doubled.isSubset(of: starts), "an event arrived under two ids: \(doubled)")
    #expect(lost.isEmpty, "lost: \(lost.prefix(20))")
    #expect(sessionStarts.count == 1)
  }

  /// The same producer with the collector down and a journal of 256 KiB: past the disk budget the
  /// oldest events drop. Killed at least 6 times and until 10,000 events were tracked, then the
  /// collector comes back and a last run delivers what waits: every event `track` returned for
  /// arrived once, or is counted as `disk_budget` in the drop reports the collector received
  /// (de-duplicated by report id) — exactly, none unaccounted. An event a kill interrupted inside
  /// `track` may have been journaled or not: it is never tracked again, and may be either.
  @Test(.timeLimit(.minutes(3)))
  func pastTheDiskBudgetEveryLostEventIsInTheReportTheCollectorReceives() async throws {
    let down = LockedFlag(true)
    let server = try await TestHTTPServer.start { _ in down.value ? TestResponse(status: 503) : TestResponse() }
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
    let outbox = directory.url.appendingPathComponent("outbox")
    let progressFile = directory.url.appendingPathComponent("progress")
    var environment = ProcessInfo.processInfo.environment
    environment["CRASH_HELPER_SMALL_OUTBOX"] = "1"
    environment["CRASH_HELPER_LIMIT"] = "30000"
    environment["CRASH_HELPER_JOURNAL_BYTES"] = String(256 << 10)
    var returned = 0
    // Indices a run died inside `track` for: never tracked again (the next run starts after them),
    // each either journaled (then it arrives or is counted) or not.
    var interrupted = Set<Int>()
    var random = SystemRandomNumberGenerator()
    // At least 6 kills, and on until `track` has returned for well past the budget (~85 bytes an
    // event: 10,000 events are ~3× 256 KiB) — a slow machine takes more runs, never proves nothing.
    var kills = 0
    // A run on a loaded machine that tracked little before its kill makes the next runs live longer
    // (up to 4×: 2 s at most, inside the time limit), so the budget is still reached in the 60 runs.
    var patience: UInt64 = 1
    while kills < 6 || (returned < 10_000 && kills < 60) {
      kills += 1
      let process = try ChildProcess(
        helperURL.path, arguments: [outbox.path, server.url.absoluteString, String(returned), progressFile.path],
        environment: environment)
      try await Task.sleep(nanoseconds: patience * UInt64.random(in: 150_000_000...500_000_000, using: &random))
      process.send(SIGKILL)
      await process.exit()
      let before = returned
      returned = max(returned, readProgress(progressFile))
      if returned - before < 500 { patience = min(4, patience * 2) }
      if let index = readInterrupted(progressFile), index == returned {
        interrupted.insert(index)
        returned += 1
      }
    }
    down.value = false
    try await deliverWhatWaits(outbox, server.url, environment: environment)

    var arrived = Set<Int>()
    var reports: [String: [CollectorDropReport.Dropped]] = [:]
    for request in server.requests where request.uri.hasPrefix("/v1/batch") {
      guard let batch = try? JSONDecoder().decode(CollectorBatch.self, from: Data(request.body)) else { continue }
      for event in batch.events {
        if case .int(let index) = event.parameters["i"] { arrived.insert(Int(index)) }
      }
      for report in batch.diagnostics ?? [] { reports[report.id] = report.dropped }
    }
    let counted = reports.values.joined().filter { $0.reason == "disk_budget" }.reduce(0) { $0 + Int($1.count) }
    let missing = (0..<returned).filter { !arrived.contains($0) }
    let lost = missing.filter { !interrupted.contains($0) }.count
    let uncertain = missing.count - lost
    print(
      "disk budget test: \(kills) kills, \(returned) returned by track, \(arrived.count) arrived, \(lost) lost, "
        + "\(uncertain) interrupted inside track and missing, "
        + "\(counted) counted as disk_budget in \(reports.count) drop reports")
    #expect(lost > 0, "the budget was never reached: the test proves nothing")
    // Exact but for the events a kill interrupted inside `track` (each journaled and counted, or not).
    #expect(
      counted >= lost && counted <= lost + uncertain, "counted \(counted), lost \(lost) (+\(uncertain) uncertain)")
    #expect(arrived.isSubset(of: Set(0..<returned)))
  }

  /// Three processes (an app, a widget, a share extension) track into one folder (outbox, journal,
  /// anonymous id) at once and are killed with SIGKILL at random, 12 times, restarted each time; at
  /// the end all are killed and a last run delivers what waits. Every event `track` returned for in
  /// any process arrives, under one id, and all carry the one anonymous id.
  @Test(.timeLimit(.minutes(3)))
  func threeProcessesSharingAFolderKilledAtRandomDeliverEveryEventOnce() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
    let outbox = directory.url.appendingPathComponent("outbox")
    let tags = ["app", "widget", "share"]
    var returned = Dictionary(uniqueKeysWithValues: tags.map { ($0, 0) })
    var running: [String: ChildProcess] = [:]
    var starts = Set<String>()
    func start(_ tag: String) throws {
      starts.insert("\(tag)#\(returned[tag]!)")
      let progress = directory.url.appendingPathComponent("progress-\(tag)").path
      running[tag] = try ChildProcess(
        helperURL.path, arguments: [outbox.path, server.url.absoluteString, String(returned[tag]!), progress, tag])
    }
    func kill9(_ tag: String) async {
      guard let process = running.removeValue(forKey: tag) else { return }
      process.send(SIGKILL)
      await process.exit()
      let progress = directory.url.appendingPathComponent("progress-\(tag)")
      returned[tag] = max(returned[tag]!, readProgress(progress))
    }

    var random = SystemRandomNumberGenerator()
    for tag in tags { try start(tag) }
    for _ in 0..<12 {
      try await Task.sleep(nanoseconds: UInt64.random(in: 60_000_000...250_000_000, using: &random))
      let tag = tags.randomElement(using: &random)!
      await kill9(tag)
      try start(tag)
    }
    // Each process tracks past 100 events before the last kill (a loaded machine starts them slowly).
    func tracked(_ tag: String) -> Int {
      max(returned[tag]!, readProgress(directory.url.appendingPathComponent("progress-\(tag)")))
    }
    try await Task.sleep(nanoseconds: 100_000_000)
    for _ in 0..<300 where tags.contains(where: { tracked($0) <= 100 }) {
      try await Task.sleep(nanoseconds: 100_000_000)
    }
    for tag in tags { await kill9(tag) }

    try await deliverWhatWaits(outbox, server.url)

    var byID: [String: String] = [:]
    var anonymousIDs = Set<String>()
    for request in server.requests where request.uri.hasPrefix("/v1/batch") {
      let batch = try JSONDecoder().decode(CollectorBatch.self, from: Data(request.body))
      for event in batch.events where event.name == "crash_probe" {
        guard case .int(let index) = event.parameters["i"], case .string(let tag) = event.parameters["p"] else {
          continue
        }
        byID[event.id] = "\(tag)#\(index)"
        anonymousIDs.insert(event.anonymousId)
      }
    }
    let keys = byID.values.sorted()
    // Only a run's first index may arrive under two ids (see the kill -9 test above).
    let doubled = Set(Dictionary(grouping: keys, by: { $0 }).filter { $0.value.count > 1 }.keys)
    #expect(doubled.isSubset(of: starts), "an event arrived under two ids: \(doubled)")
    let arrived = Set(keys)
    let lost = tags.flatMap { tag in (0..<returned[tag]!).map { "\(tag)#\($0)" } }.filter { !arrived.contains($0) }
    print(
      "shared-folder test: 3 processes, 15 kills, returned \(returned), \(arrived.count) arrived, \(lost.count) lost")
    #expect(tags.allSatisfy { returned[$0]! > 100 })
    #expect(lost.isEmpty, "lost: \(lost.prefix(20))")
    #expect(anonymousIDs.count == 1)
  }

  /// A server down for 1,000,000 events: the outbox stays within its byte limit the whole time,
  /// and once the server is back, delivered + dropped accounts for every event exactly.
  @Test(.timeLimit(.minutes(5)))
  func aMillionEventsAgainstADownServerStayWithinTheBound() async throws {
    let probe = try await TestHTTPServer.start()
    let port = probe.port
    await probe.stop()
    let directory = TemporaryDirectory()
    let bounds = OutboxConfiguration(maximumBytes: 2 << 20, maximumRecords: 1_000_000, segmentBytes: 256 << 10)
    let collector = try CollectorService(
      endpoint: URL(string: "http://127.0.0.1:\(port)")!, writeKey: "k", directory: directory.url, outbox: bounds,
      // Seconds apart, not tenths: each refused connection goes through URLSession's libcurl socket
      // teardown, whose race with DispatchSource cancellation crashes Linux processes now and then
      // (swift-corelibs-foundation #4791, #5469). Dozens of attempts prove the bound as well as hundreds.
      retry: RetryPolicy(initialDelay: 0.5, maximumDelay: 2),
      policy: FlushPolicy(count: 1000, interval: nil, flushTimeout: 30)
    )
    let tracker = Tracker(
      services: [collector],
      configuration: TrackerConfiguration(emitsSessionEvents: false, queueCapacity: 1_000_000)
    )
    let total = 1_000_000
    var largestDisk = 0
    for index in 0..<total {
      tracker.track(GenericEvent("outage", parameters: ["i": .int(index)]))
      if index % 50_000 == 0 {
        largestDisk = max(largestDisk, try diskUse(directory.url))
      }
    }
    // The outage lasts until the tracker has handed every event to the service.
    while tracker.stats.queued > 0 {
      largestDisk = max(largestDisk, try diskUse(directory.url))
      try await Task.sleep(nanoseconds: 100_000_000)
    }
    let server = try await TestHTTPServer.start(port: port)
    defer { Task { await server.stop() } }
    await tracker.flush()
    largestDisk = max(largestDisk, try diskUse(directory.url))

    let stats = try #require(collector.statistics())
    let dropped = stats.dropped[.outboxFull] ?? 0
    print(
      "outage test: \(total) events, \(stats.delivered) delivered, \(dropped) dropped (outbox_full), largest outbox \(largestDisk) bytes"
    )
    #expect(tracker.stats.totalDropped == 0)
    #expect(stats.queued == 0)
    #expect(stats.delivered + dropped == total)
    #expect(largestDisk <= bounds.maximumBytes)
    // What arrived is the newest events, each once.
    let arrived = try batches(server).flatMap(\.events).compactMap { event -> Int? in
      if case .int(let index) = event.parameters["i"] { return Int(index) }
      return nil
    }
    // (Compared as a flag: a diff of two arrays this long would take the test runner minutes.)
    let newestInOrder = arrived == Array((total - arrived.count)..<total)
    #expect(newestInOrder, "arrived: \(arrived.count) events, first \(arrived.prefix(5)), last \(arrived.suffix(5))")
  }
}
