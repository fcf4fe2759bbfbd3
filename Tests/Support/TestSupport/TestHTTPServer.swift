import CompressNIO
public import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// One request the test server received, body decompressed when it was gzip.
public struct RecordedRequest: Sendable {
  /// `POST`, `GET`, ...
  public var method: String
  /// The path with the query, e.g. `/v1/batch?x=1`.
  public var uri: String
  /// Header fields, names in lower case.
  public var headers: [String: String]
  /// The body as sent (compressed when `content-encoding: gzip`).
  public var rawBody: [UInt8]
  /// The body after gzip decoding, when the request was gzip.
  public var body: [UInt8]
  /// When it arrived.
  public var receivedAt: Date
}

/// What the test server answers.
public struct TestResponse: Sendable {
  public var status: Int
  public var headers: [String: String]
  public var body: [UInt8]
  /// Seconds to wait before answering (a slow server).
  public var delay: TimeInterval

  public init(status: Int = 200, headers: [String: String] = [:], body: String = "", delay: TimeInterval = 0) {
    self.status = status
    self.headers = headers
    self.body = Array(body.utf8)
    self.delay = delay
  }
}

/// A real HTTP server on 127.0.0.1 (ephemeral port) for delivery and service tests: records every
/// request and answers what the test's handler says.
public final class TestHTTPServer: Sendable {
  /// The port it listens on.
  public let port: Int
  private let group: ServiceGroup
  private let task: Task<Void, any Error>
  private let recorded: Recorder

  /// The server's base URL, `http://127.0.0.1:<port>`.
  public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

  /// Every request so far, in arrival order.
  public var requests: [RecordedRequest] { recorded.all }

  /// Starts a server on `port` (0: an ephemeral one) answering with `handler` (called once per
  /// request, in arrival order).
  public static func start(
    port: Int = 0,
    handler: @escaping @Sendable (RecordedRequest) async -> TestResponse = { _ in TestResponse() }
  ) async throws -> TestHTTPServer {
    let recorder = Recorder()
    let router = Router()
    let respond: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
      var buffer = try await request.body.collect(upTo: 64 << 20)
      let raw = buffer.readBytes(length: buffer.readableBytes) ?? []
      var headers: [String: String] = [:]
      for field in request.headers { headers[field.name.canonicalName] = field.value }
      var body = raw
      if headers["content-encoding"] == "gzip" {
        var compressed = ByteBuffer(bytes: raw)
        var inflated = try compressed.decompress(with: .gzip())
        body = inflated.readBytes(length: inflated.readableBytes) ?? []
      }
      let recorded = RecordedRequest(
        method: request.method.rawValue, uri: request.uri.description, headers: headers, rawBody: raw, body: body,
        receivedAt: Date()
      )
      recorder.append(recorded)
      let answer = await handler(recorded)
      if answer.delay > 0 { try await Task.sleep(nanoseconds: UInt64(answer.delay * 1_000_000_000)) }
      var fields = HTTPFields()
      for (name, value) in answer.headers {
        if let field = HTTPField.Name(name) { fields[field] = value }
      }
      return Response(
        status: HTTPResponse.Status(code: answer.status), headers: fields,
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body))
      )
    }
    router.post("**", use: respond)
    router.get("**", use: respond)
    let ready = PortBox()
    let logger = Logger(label: "test-http-server") { _ in SwiftLogNoOpLogHandler() }
    let application = Application(
      router: router,
      configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
      onServerRunning: { channel in ready.set(channel.localAddress?.port ?? 0) },
      logger: logger
    )
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(services: [application], gracefulShutdownSignals: [], logger: logger))
    let task = Task { try await group.run() }
    let port = try await ready.wait()
    return TestHTTPServer(port: port, group: group, task: task, recorder: recorder)
  }

  private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>, recorder: Recorder) {
    self.port = port
    self.group = group
    self.task = task
    self.recorded = recorder
  }

  /// Stops the server gracefully and waits until it no longer listens.
  ///
  /// Cancelling the serving task instead can trap in NIO when a client connects at that moment
  /// (an accepted connection nobody serves: "Deinited NIOAsyncWriter without calling finish()",
  /// apple/swift-nio#2813); a service still retrying in the background is such a client.
  public func stop() async {
    await group.triggerGracefulShutdown()
    _ = try? await task.value
  }
}

private final class Recorder: @unchecked Sendable {
  // @unchecked: `requests` is only touched under `lock`.
  private let lock = NSLock()
  private var requests: [RecordedRequest] = []
  func append(_ request: RecordedRequest) {
    lock.lock()
    requests.append(request)
    lock.unlock()
  }
  var all: [RecordedRequest] {
    lock.lock()
    defer { lock.unlock() }
    return requests
  }
}

private final class PortBox: @unchecked Sendable {
  // @unchecked: `port` is only touched under `lock`.
  private let lock = NSLock()
  private var port: Int?
  func set(_ value: Int) {
    lock.lock()
    port = value
    lock.unlock()
  }
  func wait() async throws -> Int {
    for _ in 0..<500 {
      if let value = lock.withLock({ port }) { return value }
      try await Task.sleep(nanoseconds: 10_000_000)
    }
    throw CancellationError()
  }
}
