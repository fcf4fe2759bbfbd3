import CollectorClickHouse
import CollectorStore
import Foundation
import NIOCore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A ClickHouse that sends an answer's head and then nothing (an answer stalled after its head):
/// the client gives up at the statement's deadline, sends it once more, and then fails with a
/// clear error, instead of waiting for the rows forever. How many times a statement was sent is
/// counted by the server, not guessed from the time taken (on a loaded machine a deadline's
/// timer may fire seconds late).
@Suite("ClickHouse client deadlines", .serialized)
struct ClickHouseClientDeadlineTests {
  /// An HTTP server (Python's standard library) that answers every request, on every connection,
  /// with a head promising 100 bytes and sends none, printing `request` for each; it ends 60 s
  /// after its last connection.
  private static let stallingServer = """
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    print(server.getsockname()[1], flush=True)
    server.settimeout(60)
    held = []
    while True:
        connection, _ = server.accept()
        connection.recv(65536)
        print("request", flush=True)
        connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 100\\r\\n\\r\\n")
        held.append(connection)
    """

  /// The stalling server, what it prints after its port, and a client of it whose statements may
  /// take 2 s.
  private static func stalled() async throws -> (ChildProcess, FileHandle, ClickHouseClient) {
    let output = Pipe()
    let server = try ChildProcess(
      "/usr/bin/env", arguments: ["python3", "-c", Self.stallingServer], output: .pipe(output))
    let line = await offThePool { output.fileHandleForReading.availableData }
    let printed = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    // The port line is read alone: nothing is printed after it until a request comes.
    guard let port = Int(printed) else {
      server.send(SIGKILL)
      throw StoreError.unavailable("the stalling server printed no port: \(printed)")
    }
    var client = try ClickHouseClient(
      url: URL(string: "http://127.0.0.1:\(port)")!, database: "t_deadline", http: ClickHouseClient.http)
    client.timeout = .seconds(2)
    return (server, output.fileHandleForReading, client)
  }

  /// How many requests `server` took, once it has ended.
  private static func requests(_ server: ChildProcess, _ printed: FileHandle) async -> Int {
    server.send(SIGKILL)
    await server.exit()
    let text = String(decoding: await printed.readToEndOffThePool(), as: UTF8.self)
    return text.split(separator: "\n").filter { $0 == "request" }.count
  }

  @Test(.timeLimit(.minutes(1)))
  func anAnswerThatStallsAfterItsHeadIsSentOnceMoreThenFails() async throws {
    let (server, printed, client) = try await Self.stalled()
    defer { server.send(SIGKILL) }
    let started = ContinuousClock.now
    let error = await #expect(throws: StoreError.self) { _ = try await client.rows("SELECT 1") }
    let message = error.map { "\($0)" } ?? ""
    #expect(message.contains("did not finish its answer within 2 s, twice"), "\(message)")
    // Two attempts, each given its 2 s, then the error.
    #expect(ContinuousClock.now - started >= .seconds(4))
    #expect(await Self.requests(server, printed) == 2)
  }

  /// A streamed answer is not sent again once its head has come (its pieces may have been taken):
  /// it fails at the one deadline.
  @Test(.timeLimit(.minutes(1)))
  func aStreamedAnswerThatStallsAfterItsHeadFailsAtItsDeadline() async throws {
    let (server, printed, client) = try await Self.stalled()
    defer { server.send(SIGKILL) }
    let started = ContinuousClock.now
    let error = await #expect(throws: StoreError.self) {
      _ = try await client.stream("SELECT 1 FORMAT RowBinary", from: 0) { (count: inout Int, piece) in
        count += piece.readableBytes
      }
    }
    let message = error.map { "\($0)" } ?? ""
    #expect(message.contains("did not finish its answer within 2 s"), "\(message)")
    #expect(!message.contains("twice"), "\(message)")
    // One attempt, given its 2 s.
    #expect(ContinuousClock.now - started >= .seconds(2))
    #expect(await Self.requests(server, printed) == 1)
  }
}
