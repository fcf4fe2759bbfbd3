import CollectorWire
import Foundation
import TestSupport
import Testing

/// Lifecycle tracking across real process runs: the crash helper plays two launches of an app, the
/// second one after an upgrade, against a collector on loopback.
@Suite("App lifecycle across processes")
struct LifecycleProcessTests {
  private func run(_ outbox: URL, _ server: URL, version: String) async throws {
    let helper = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("CrashHelper")
    let process = try ChildProcess(
      helper.path, arguments: [outbox.path, server.absoluteString, "--lifecycle", version])
    #expect(await process.exit() == .exited(0), "run of \(version)")
  }

  @Test(.timeLimit(.minutes(2)))
  func anUpgradeBetweenTwoRunsIsTrackedAsAnUpdate() async throws {
    let server = try await TestHTTPServer.start()
    defer { Task { await server.stop() } }
    let directory = TemporaryDirectory()
    try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
    let outbox = directory.url.appendingPathComponent("outbox")

    try await run(outbox, server.url, version: "1.0")
    try await run(outbox, server.url, version: "1.1")

    // Delivery is at least once: a batch retried after a slow answer arrives again, and the
    // collector keeps each event id once, as this does.
    var events: [CollectorEvent] = []
    var seen: Set<String> = []
    for request in server.requests where request.uri.hasPrefix("/v1/batch") {
      events += try JSONDecoder().decode(CollectorBatch.self, from: Data(request.body)).events
        .filter { seen.insert($0.id).inserted }
    }
    let lifecycle = events.map(\.name).filter { $0.hasPrefix("application_") || $0.hasPrefix("session_") }
    func launch(_ start: String) -> [String] {
      ["session_start", start, "application_opened", "application_backgrounded", "session_end"]
    }
    #expect(lifecycle == launch("application_installed") + launch("application_updated"))
    let update = try #require(events.first { $0.name == "application_updated" })
    #expect(update.parameters["previous_version"] == .string("1.0"))
    #expect(update.parameters["version"] == .string("1.1"))
  }
}
