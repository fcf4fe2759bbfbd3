import CollectorClickHouse
import CollectorStore
import NIOCore
import Testing

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

  /// The stalling server, with a client whose statements may take 2 s.
  private static func stalled() async throws -> ScriptedServer {
    try await ScriptedServer(stallingServer, timeout: .seconds(2))
  }

  @Test(.timeLimit(.minutes(1)))
  func anAnswerThatStallsAfterItsHeadIsSentOnceMoreThenFails() async throws {
    let server = try await Self.stalled()
    defer { server.end() }
    let client = server.client
    let started = ContinuousClock.now
    let error = await #expect(throws: StoreError.self) { _ = try await client.rows("SELECT 1") }
    let message = error.map { "\($0)" } ?? ""
    #expect(message.contains("did not finish its answer within 2 s, twice"), "\(message)")
    // Two attempts, each given its 2 s, then the error.
    #expect(ContinuousClock.now - started >= .seconds(4))
    #expect(await server.requests() == 2)
  }

  /// A streamed answer is not sent again once its head has come (its pieces may have been taken):
  /// it fails at the one deadline.
  @Test(.timeLimit(.minutes(1)))
  func aStreamedAnswerThatStallsAfterItsHeadFailsAtItsDeadline() async throws {
    let server = try await Self.stalled()
    defer { server.end() }
    let client = server.client
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
    #expect(await server.requests() == 1)
  }
}
