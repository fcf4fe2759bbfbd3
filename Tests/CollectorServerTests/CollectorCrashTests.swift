import CollectorSQLite
import CollectorStore
import CollectorWire
import Delivery
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The `collector` executable built next to the tests.
private let collectorURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
  .appendingPathComponent("collector")

/// A collector process started from the built executable.
final class CollectorProcess: Sendable {
  let process: ChildProcess
  let port: Int
  /// Kept open while the collector runs: it logs to its standard output.
  private let output: Pipe

  private init(process: ChildProcess, port: Int, output: Pipe) {
    self.process = process
    self.port = port
    self.output = output
  }

  /// Starts the collector and waits for its "listening" line; the blocking reads run on a thread
  /// of their own, not on the test's (a pool thread).
  static func start(arguments: [String]) async throws -> CollectorProcess {
    let output = Pipe()
    let process = try ChildProcess(collectorURL.path, arguments: arguments, output: .pipe(output), error: .null)
    let (port, text) = await offThePool { () -> (Int?, String) in
      var text = ""
      let deadline = Date().addingTimeInterval(60)
      while Date() < deadline {
        let data = output.fileHandleForReading.availableData
        if data.isEmpty { break }
        text += String(decoding: data, as: UTF8.self)
        if let range = text.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
          return (Int(text[range].split(separator: ":").last!)!, text)
        }
      }
      return (nil, text)
    }
    guard let port else {
      process.send(SIGKILL)
      await process.exit()
      throw CollectorProcessError.didNotStart(text)
    }
    // From here on its log is read and dropped, on a thread of its own, until the collector ends:
    // a full pipe (64 KiB) would block the collector's next log line, and with it the collector.
    let reader = output.fileHandleForReading
    Thread.detachNewThread { while !reader.availableData.isEmpty {} }
    return CollectorProcess(process: process, port: port, output: output)
  }

  var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

  func kill9() async {
    process.send(SIGKILL)
    await process.exit()
  }

  /// SIGTERM, then waits for the graceful exit; says how the collector ended.
  func stop() async -> ChildProcess.Termination {
    process.send(SIGTERM)
    return await process.exit()
  }
}

enum CollectorProcessError: Error { case didNotStart(String) }

/// Crash safety of the server: `kill -9` in the middle of a load run loses no acknowledged event,
/// and the clients' retries after the restart add no duplicate. Serialized and skipped under
/// ThreadSanitizer with the other crash suites (`--skip CrashTests`).
@Suite("Collector crash safety", .serialized)
struct CollectorCrashTests {
  /// With the ingest spool, a 2xx is the spool's `fsync`: what it held at the kill reaches the store
  /// at the next start.
  @Test(
    "kill -9 during load: every acknowledged event is stored, retries add no duplicates",
    .timeLimit(.minutes(5)), arguments: [false, true])
  func killDuringLoad(spooled: Bool) async throws {
    let directory = TemporaryDirectory()
    let database = directory.url.appendingPathComponent("collector.sqlite").path
    var arguments = [
      "--port", "0", "--sqlite-path", database, "--write-keys", "ty=\(writeKey)", "--rate-limit", "0",
    ]
    if spooled { arguments += ["--spool-directory", directory.url.appendingPathComponent("spool").path] }
    let transport = URLSessionTransport(timeout: 30)
    func request(_ url: URL, _ batch: Int, sender: Int) -> Delivery.HTTPRequest {
      let events = (0..<100).map { Batches.event("s\(sender)-b\(batch)-e\($0)") }
      return Delivery.HTTPRequest(
        url: url.appendingPathComponent("v1/batch"),
        headers: ["Authorization": "Bearer \(writeKey)", "Content-Type": "application/json"],
        body: Batches.body(events)
      )
    }

    let first = try await CollectorProcess.start(arguments: arguments)
    let acknowledged = LockedSet()
    let attempted = LockedSet()
    let senders = 4
    try await withThrowingTaskGroup(of: Void.self) { group in
      for sender in 0..<senders {
        group.addTask {
          for batch in 0..<10_000 {
            attempted.insert("\(sender)/\(batch)")
            guard let response = try? await transport.send(request(first.url, batch, sender: sender)) else { return }
            guard (200..<300).contains(response.status) else { return }
            acknowledged.insert("\(sender)/\(batch)")
          }
        }
      }
      group.addTask {
        // Kill mid-load: once 40 batches are acknowledged (the machine may be busy with other
        // tests, so not after a fixed time), at the latest after 60 s.
        let deadline = ContinuousClock.now + .seconds(60)
        while acknowledged.count < 40 && ContinuousClock.now < deadline {
          try await Task.sleep(for: .milliseconds(5))
        }
        await first.kill9()
      }
      try await group.waitForAll()
    }
    #expect(acknowledged.count >= 40, "the load ran before the kill")
    print("collector kill -9: \(acknowledged.count) batches of 100 acknowledged, \(attempted.count) attempted")

    // Restarted and stopped before any client resends: what was acknowledged is there on its own.
    let restarted = try await CollectorProcess.start(arguments: arguments)
    #expect(await restarted.stop() == .exited(0))
    let kept = try SQLiteEventStore(path: database)
    let keptIDs = Set(try await kept.events(app: "ty", limit: 10_000_000).map(\.eventID))
    try await kept.close()
    let lost = acknowledged.values.filter { entry in
      let parts = entry.split(separator: "/")
      return !keptIDs.contains("s\(parts[0])-b\(parts[1])-e0") || !keptIDs.contains("s\(parts[0])-b\(parts[1])-e99")
    }
    #expect(lost.isEmpty, "acknowledged before the kill, not stored after the restart: \(lost.prefix(5))")

    // Restart on the same file; every client resends what it attempted (acknowledged or not).
    let second = try await CollectorProcess.start(arguments: arguments)
    for entry in attempted.values {
      let parts = entry.split(separator: "/").compactMap { Int($0) }
      let response = try await transport.send(request(second.url, parts[1], sender: parts[0]))
      #expect(response.status == 200)
    }
    #expect(await second.stop() == .exited(0), "SIGTERM: drains, commits, exits 0")

    let store = try SQLiteEventStore(path: database)
    let stored = Set(try await store.events(app: "ty", limit: 10_000_000).map(\.eventID))
    #expect(try await store.eventCount(app: "ty") == attempted.count * 100, "no duplicates, nothing lost")
    let missing = acknowledged.values.filter { entry in
      let parts = entry.split(separator: "/")
      return !stored.contains("s\(parts[0])-b\(parts[1])-e0") || !stored.contains("s\(parts[0])-b\(parts[1])-e99")
    }
    #expect(missing.isEmpty, "acknowledged before the kill but not stored: \(missing.prefix(5))")
    try await store.close()
  }
}

final class LockedSet: @unchecked Sendable {
  private let lock = NSLock()
  private var set: Set<String> = []
  func insert(_ value: String) { lock.withLock { _ = set.insert(value) } }
  var values: [String] { lock.withLock { Array(set) } }
  var count: Int { lock.withLock { set.count } }
}
