public import AsyncHTTPClient
public import CollectorStore
public import Foundation
public import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import WireJSON

/// ClickHouse's HTTP interface (its official, stable protocol): statements go in the request body,
/// rows come back as `JSONCompact`, rows go in as `TabSeparated` (events, counters) or
/// `JSONEachRow`. One client per server; requests share `HTTPClient`'s connection pool.
public struct ClickHouseClient: Sendable {
  /// The largest answer a statement may return, in bytes (256 MB).
  static let largestAnswer = 256 * 1024 * 1024
  /// The server's HTTP address (`http://127.0.0.1:8123`), without a path.
  public let url: URL
  /// The database this client's statements name (`database.events`).
  public let database: String
  let http: HTTPClient
  private let user: String?
  private let password: String?
  /// How long one statement may take before it is abandoned.
  public var timeout: TimeAmount = .seconds(120)

  /// A client of the server at `url` (its user and password, if any, from the URL), for `database`.
  public init(url: URL, database: String, http: HTTPClient) throws(StoreError) {
    guard url.scheme == "http" || url.scheme == "https", url.host != nil else {
      throw .unavailable("ClickHouse URL \(url.absoluteString) is not http(s)://host:port")
    }
    guard ClickHouseSQL.isValidIdentifier(database) else {
      throw .unavailable("ClickHouse database \"\(database)\" is not a plain identifier ([a-z_][a-z0-9_]*)")
    }
    var base = URLComponents(url: url, resolvingAgainstBaseURL: false)
    user = base?.user
    password = base?.password
    base?.user = nil
    base?.password = nil
    base?.path = ""
    base?.query = nil
    self.url = base?.url ?? url
    self.database = database
    self.http = http
  }

  /// Runs `sql` (no result wanted) with `settings` as URL parameters; `body`, if given, is the data
  /// of an `INSERT … FORMAT …` statement, which then goes in the URL.
  public func execute(_ sql: String, body: ByteBuffer? = nil, settings: [String: String] = [:]) async throws(StoreError)
  {
    _ = try await send(sql, body: body, settings: settings)
  }

  /// The rows of the query `sql` (without a `FORMAT` clause), typed from the result's column types:
  /// integers as `.int`, floats as `.double`, `NULL` as `.null`, everything else as `.text`.
  ///
  /// `tables` go with the query as ClickHouse's external data: each a temporary table of one
  /// `String` column `value` that `sql` names (`event_id IN ids`), sent as tab-separated lines. A
  /// list of ids costs the server a parse of a few bytes each that way, where written into the SQL
  /// as `IN ('…', …)` each cost it about 8 µs (50,000 ids: 400 ms against 40 ms, measured with
  /// `curl` on 18.16).
  public func rows(_ sql: String, settings: [String: String] = [:], tables: [ExternalTable] = [])
    async throws(StoreError)
    -> [SQLRow]
  {
    var settings = settings
    var body: ByteBuffer?
    if !tables.isEmpty {
      let form = ExternalTable.form(tables)
      body = form.body
      settings["query"] = sql + "\nFORMAT JSONCompact"
      settings["_content_type"] = form.contentType
      for table in tables {
        settings["\(table.name)_structure"] = "value String"
        settings["\(table.name)_format"] = "TSV"
      }
    }
    let buffer = try await send(sql + "\nFORMAT JSONCompact", body: body, settings: settings)
    do {
      return try ClickHouseResult.rows(Data(buffer: buffer))
    } catch {
      throw .unavailable("ClickHouse answered with a result that is not JSONCompact: \(error)")
    }
  }

  /// The process-wide HTTP client of the ClickHouse stores: it closes a pooled connection after 1 s
  /// idle, before ClickHouse's `keep_alive_timeout` (3 s by default) closes it under a request.
  /// Up to 32 connections per server run queries at once (ClickHouse runs 100 by default; reports,
  /// writes and repairs share them), and a request waits up to 30 s for one (the client's default
  /// 10 s failed requests while rebuilds and reports queued on a busy server).
  public static let http: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(1), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
    configuration.timeout = .init(connect: .seconds(30))
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
  }()

  private func send(_ sql: String, body: ByteBuffer?, settings: [String: String]) async throws(StoreError) -> ByteBuffer
  {
    // A pooled connection the server closed as the request left, or an answer that stopped
    // before its end, is sent again, once, on a fresh connection: every statement this module
    // writes may run twice (DDL says IF NOT EXISTS, inserts land in ReplacingMergeTrees whose
    // duplicates the write's repair merges, deletes delete the same rows). A statement can so take
    // up to twice ``timeout``.
    for round in 0..<2 {
      do {
        return try await attempt(sql, body: body, settings: settings)
      } catch {
        switch error {
        case .connectionClosed(let reason), .late(let reason), .lostBetweenServers(let reason):
          if round == 1 { throw .unavailable(reason) }
        case .failed(let storeError): throw storeError
        }
      }
    }
    throw .unavailable("ClickHouse at \(url.absoluteString) closed the connection twice")
  }

  private enum Failure: Error {
    case connectionClosed(String)
    /// The answer had begun and not ended by the statement's deadline.
    case late(String)
    /// The server failed passing the statement to another server (``isLostBetweenServers(_:)``).
    case lostBetweenServers(String)
    case failed(StoreError)
  }

  /// The request running `sql` with `settings` as URL parameters (`body`, if given, is the data of an
  /// `INSERT … FORMAT …`, and the statement goes in the URL).
  func request(_ sql: String, body: ByteBuffer?, settings: [String: String]) throws(StoreError) -> HTTPClientRequest {
    var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
    // Statements name their tables with the database (`db.events`), so one client can also create it.
    // A write's lookups name every event id of its batch (up to the group committer's 20,000 rows):
    // 16 MB of statement and a million syntax-tree nodes instead of the defaults (256 KB, 50,000).
    var settings = settings
    for (name, value) in [("max_query_size", "16777216"), ("max_ast_elements", "1000000")] {
      settings[name] = settings[name] ?? value
    }
    let contentType = settings.removeValue(forKey: "_content_type")
    if body != nil { settings["query"] = settings["query"] ?? sql }
    let items = settings.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
    components?.queryItems = items
    guard let address = components?.url?.absoluteString else { throw .unavailable("ClickHouse URL \(url) is invalid") }
    var request = HTTPClientRequest(url: address)
    request.method = .POST
    if let user { request.headers.add(name: "X-ClickHouse-User", value: user) }
    if let password { request.headers.add(name: "X-ClickHouse-Key", value: password) }
    if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
    request.body = .bytes(body ?? ByteBuffer(string: sql))
    return request
  }

  private func attempt(_ sql: String, body: ByteBuffer?, settings: [String: String]) async throws(Failure)
    -> ByteBuffer
  {
    let request: HTTPClientRequest
    do { request = try self.request(sql, body: body, settings: settings) } catch { throw .failed(error) }
    do {
      let deadline = NIODeadline.now() + timeout
      let response = try await http.execute(request, deadline: deadline)
      let answer = try await Self.collect(response.body, by: deadline)
      guard (200..<300).contains(response.status.code) else {
        let text = String(buffer: answer).trimmingCharacters(in: .whitespacesAndNewlines)
        let reason = "ClickHouse \(response.status.code): \(text.prefix(2_000))"
        if Self.isLostBetweenServers(text) { throw Failure.lostBetweenServers(reason) }
        throw Failure.failed(.unavailable(reason))
      }
      return answer
    } catch let error as Failure {
      throw error
    } catch is ClickHouseAnswerLate {
      let seconds = timeout.nanoseconds / 1_000_000_000
      throw .late("ClickHouse at \(url.absoluteString) did not finish its answer within \(seconds) s, twice")
    } catch is NIOTooManyBytesError {
      // The server answered; the answer is what is too large (a report over too many rows).
      throw .failed(.unavailable("ClickHouse's answer is over \(Self.largestAnswer >> 20) MB, the most a read takes"))
    } catch {
      let reason = "ClickHouse at \(url.absoluteString) cannot be reached: \(error)"
      if let client = error as? HTTPClientError, client == .remoteConnectionClosed {
        throw .connectionClosed(reason)
      }
      throw .failed(.unavailable(reason))
    }
  }
}

extension ClickHouseClient {
  /// Whether the error text `text` a server answered is ClickHouse's `UNEXPECTED_PACKET_FROM_CLIENT`
  /// (code 101): a fault between two servers of a cluster, not in the statement. ClickHouse 18.16
  /// sometimes loses its place in the exchange when a query sends a `GLOBAL` subquery's rows to the
  /// shards (`Unexpected packet Data received from client`; fixed upstream in ClickHouse PR #17254),
  /// and the same statement succeeds when sent again. Such a statement is sent once more, as one
  /// whose connection closed is; every other error is the statement's and fails it at once.
  static func isLostBetweenServers(_ text: String) -> Bool {
    // 18.16 writes `Code: 101, e.displayText() = …`; later versions `Code: 101. DB::Exception: …`.
    text.hasPrefix("Code: 101,") || text.hasPrefix("Code: 101.")
  }
}

/// An answer whose body had not come by the statement's deadline.
struct ClickHouseAnswerLate: Error {}

extension ClickHouseClient {
  /// The answer's body, up to ``largestAnswer`` bytes, by `deadline`: AsyncHTTPClient's deadline
  /// ends when the answer's head arrives, and ClickHouse sends the head before the rows, so a
  /// statement that stalls on the server after it would be waited for forever. Past the deadline
  /// the read is cancelled (which closes the connection) and ``ClickHouseAnswerLate`` thrown; the
  /// statement is sent once more.
  static func collect(_ body: HTTPClientResponse.Body, by deadline: NIODeadline) async throws -> ByteBuffer {
    try await reading(by: deadline) { try await body.collect(upTo: largestAnswer) }
  }

  /// What `read` gives (an answer's body, read), if it ends by `deadline`; past it, `read` is
  /// cancelled (which closes the connection) and ``ClickHouseAnswerLate`` thrown.
  static func reading<Read: Sendable>(by deadline: NIODeadline, _ read: @escaping @Sendable () async throws -> Read)
    async throws -> Read
  {
    try await withThrowingTaskGroup(of: Read?.self) { group in
      group.addTask { try await read() }
      group.addTask {
        try await Task.sleep(nanoseconds: UInt64(max(0, (deadline - .now()).nanoseconds)))
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next(), let answer = first else { throw ClickHouseAnswerLate() }
      return answer
    }
  }

  /// A temporary table sent with a query (ClickHouse's external data): its `name` as the query
  /// names it, and its one column `value`'s rows.
  public struct ExternalTable: Sendable {
    /// The table's name in the query (a plain identifier).
    public var name: String
    /// Its rows.
    public var values: [String]

    /// A table `name` of `values`.
    public init(_ name: String, _ values: some Sequence<String>) {
      self.name = name
      self.values = Array(values)
    }

    /// The `multipart/form-data` body holding `tables`, one file each, and its content type.
    static func form(_ tables: [ExternalTable]) -> (body: ByteBuffer, contentType: String) {
      let lines = tables.map { table in
        var rows = ClickHouseTabSeparated()
        for value in table.values {
          rows.text(value)
          rows.endRow()
        }
        return rows.buffer
      }
      // Escaped values hold no line break, so a boundary line cannot appear among them.
      let boundary = "coretracker-" + UUID().uuidString
      var body = ByteBuffer()
      for (table, data) in zip(tables, lines) {
        body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(table.name)\"; ")
        body.writeString("filename=\"\(table.name)\"\r\nContent-Type: application/octet-stream\r\n\r\n")
        body.writeImmutableBuffer(data)
        body.writeString("\r\n")
      }
      body.writeString("--\(boundary)--\r\n")
      return (body, "multipart/form-data; boundary=\(boundary)")
    }
  }
}

/// Reading `JSONCompact` results.
enum ClickHouseResult {
  struct Body: Decodable {
    struct Column: Decodable {
      let name: String
      let type: String
    }
    let meta: [Column]
    /// One value per cell: ClickHouse quotes 64-bit integers and writes the others bare.
    let data: [[JSONValue]]
  }

  static func rows(_ data: Data) throws -> [SQLRow] {
    let body = try JSONDecoder().decode(Body.self, from: data)
    let columns = body.meta.map(\.name)
    let kinds = body.meta.map { kind($0.type) }
    return body.data.map { cells in
      SQLRow(columns: columns, values: zip(cells, kinds).map { value($0, $1) })
    }
  }

  enum Kind { case integer, float, text }

  static func kind(_ type: String) -> Kind {
    var type = type
    if type.hasPrefix("Nullable(") { type = String(type.dropFirst(9).dropLast()) }
    if type.hasPrefix("Int") || type.hasPrefix("UInt") { return .integer }
    if type.hasPrefix("Float") || type.hasPrefix("Decimal") { return .float }
    return .text
  }

  static func value(_ cell: JSONValue, _ kind: Kind) -> SQLValue {
    switch (cell, kind) {
    case (.string(let text), .integer): Int64(text).map(SQLValue.int) ?? .text(text)
    case (.string(let text), .float): Double(text).map(SQLValue.double) ?? .text(text)
    case (.string(let text), .text): .text(text)
    case (.int(let number), .integer): .int(number)
    case (.int(let number), _): .double(Double(number))
    case (.double(let number), .integer): Int64(exactly: number).map(SQLValue.int) ?? .double(number)
    case (.double(let number), _): .double(number)
    case (.bool(let flag), _): .int(flag ? 1 : 0)
    case (.null, _), (.array, _), (.object, _): .null
    }
  }
}
