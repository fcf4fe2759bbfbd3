import CollectorClickHouse
import CollectorStore
import NIOCore
import Testing

/// A ClickHouse whose first answer is an error and whose later answers are one row: a fault
/// between the servers of a cluster (code 101, which ClickHouse 18.16 sometimes answers to a query
/// with a `GLOBAL` subquery) is sent once more and answered; an error of the statement itself is
/// not sent again. The server counts the requests it took.
@Suite("ClickHouse client: statements sent again")
struct ClickHouseClientRetryTests {
  /// An HTTP server (Python's standard library) answering its first request with 500 and the body
  /// in `argv[1]`, every later one with one row as `JSONCompact`, printing `request` for each; it
  /// ends 60 s after its last request.
  private static let failingOnceServer = """
    import http.server, sys
    first = [True]
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            print("request", flush=True)
            if first[0]:
                first[0] = False
                body, status = sys.argv[1].encode(), 500
            else:
                body, status = b'{"meta":[{"name":"x","type":"UInt8"}],"data":[[1]],"rows":1}', 200
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.timeout = 60
    while True:
        server.handle_request()
    """

  static let lostBetweenServers =
    "Code: 101, e.displayText() = DB::Exception: Unexpected packet Data received from client, "
    + "e.what() = DB::Exception"
  static let lostBetweenServersLater =
    "Code: 101. DB::Exception: Unexpected packet Data received from client. (UNEXPECTED_PACKET_FROM_CLIENT)"
  static let unknownTable =
    "Code: 60, e.displayText() = DB::Exception: Table t.nonexist doesn't exist., e.what() = DB::Exception"

  /// The failing-once server answering `error` first, with a client.
  private static func failingOnce(with error: String) async throws -> ScriptedServer {
    try await ScriptedServer(failingOnceServer, arguments: [error], timeout: .seconds(10))
  }

  @Test(
    "a fault between servers is sent again and answered; a statement's own error is not",
    .timeLimit(.minutes(1)),
    arguments: [(lostBetweenServers, true), (lostBetweenServersLater, true), (unknownTable, false)])
  func rowsAfterAFirstError(error: String, sentAgain: Bool) async throws {
    let server = try await Self.failingOnce(with: error)
    defer { server.end() }
    let client = server.client
    if sentAgain {
      let rows = try await client.rows("SELECT 1 AS x")
      #expect(rows.count == 1 && rows[0]["x"].int == 1)
    } else {
      let thrown = await #expect(throws: StoreError.self) { _ = try await client.rows("SELECT 1 AS x") }
      #expect("\(thrown.map { "\($0)" } ?? "")".contains("Code: 60"))
    }
    #expect(await server.requests() == (sentAgain ? 2 : 1))
  }

  @Test(
    "a streamed statement is sent again after a fault between servers, before any piece",
    .timeLimit(.minutes(1)),
    arguments: [(lostBetweenServers, true), (unknownTable, false)])
  func streamAfterAFirstError(error: String, sentAgain: Bool) async throws {
    let server = try await Self.failingOnce(with: error)
    defer { server.end() }
    let client = server.client
    let read = { @Sendable () async throws -> Int in
      try await client.stream("SELECT 1 AS x FORMAT JSONCompact", from: 0) { (count: inout Int, piece) in
        count += piece.readableBytes
      }
    }
    if sentAgain {
      #expect(try await read() > 0)
    } else {
      await #expect(throws: StoreError.self) { _ = try await read() }
    }
    #expect(await server.requests() == (sentAgain ? 2 : 1))
  }
}
