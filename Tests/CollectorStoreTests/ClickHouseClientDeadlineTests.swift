import CollectorClickHouse
import CollectorStore
import Foundation
import NIOCore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A ClickHouse that sends an answer's head and then nothing (a statement stalled on the server,
/// after the head, as 18.16 can): the client gives up at the statement's deadline with a clear
/// error, instead of waiting for the rows forever.
@Suite("ClickHouse client deadlines")
struct ClickHouseClientDeadlineTests {
  /// A one-connection HTTP server (Python's standard library) that answers every request with a
  /// head promising 100 bytes and sends none; it ends after 60 s by itself.
  private static let stallingServer = """
    import socket, sys, time
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    print(server.getsockname()[1], flush=True)
    server.settimeout(60)
    connection, _ = server.accept()
    connection.recv(65536)
    connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 100\\r\\n\\r\\n")
    time.sleep(60)
    """

  @Test(.timeLimit(.minutes(1)))
  func anAnswerThatStallsAfterItsHeadFailsAtTheDeadline() async throws {
    let output = Pipe()
    let server = try ChildProcess(
      "/usr/bin/env", arguments: ["python3", "-c", Self.stallingServer], output: .pipe(output))
    defer { server.send(SIGKILL) }
    let line = await offThePool { output.fileHandleForReading.availableData }
    let port = try #require(Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
    var client = try ClickHouseClient(
      url: URL(string: "http://127.0.0.1:\(port)")!, database: "t_deadline", http: ClickHouseClient.http)
    client.timeout = .seconds(2)
    let started = ContinuousClock.now
    let error = await #expect(throws: StoreError.self) { _ = try await client.rows("SELECT 1") }
    #expect(
      "\(error.map { "\($0)" } ?? "")".contains("did not finish its answer within 2 s"), "\(String(describing: error))")
    #expect(ContinuousClock.now - started < .seconds(30))
  }
}
