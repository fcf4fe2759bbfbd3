import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTesting
import Logging
import NIOCore
import ServiceLifecycle

/// An application served on a loopback port, as HummingbirdTesting's `.live` serves it, with one
/// client connection whose read timeout (`readTimeout`) the test chooses.
///
/// `.live`'s client gives up on an answer after 20 s without a byte. The whole suite runs every
/// test at once on this 2-core machine, so in its first minutes a request that takes 10 ms alone
/// takes 2–9 s (measured in a full `swift test`: a 33-request scenario took 115 s), and now and
/// then one passes 20 s: a slow machine, not a hang. Tests that send many requests in a row use
/// this instead; a server that really hangs is still caught, by this timeout and by CI's stall
/// watch.
///
/// ```swift
/// try await collector.application(closesStore: false).onLoopback { client in
///   let status = try await client.execute(uri: "/health", method: .get) { $0.status }
/// }
/// ```
extension ApplicationProtocol {
  func onLoopback<Value: Sendable>(
    readTimeout: Duration = .seconds(120), _ test: @Sendable (LoopbackClient) async throws -> Value
  ) async throws -> Value {
    let served = LoopbackApplication(base: self)
    let services = ServiceGroup(configuration: .init(services: [served], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self, returning: Value.self) { group in
      group.addTask { try await services.run() }
      let client = TestClient(
        host: "127.0.0.1", port: await served.port, configuration: .init(timeout: readTimeout))
      client.connect()
      do {
        let value = try await test(LoopbackClient(client: client))
        try await client.shutdown()
        await services.triggerGracefulShutdown()
        return value
      } catch {
        try? await client.shutdown()
        await services.triggerGracefulShutdown()
        throw error
      }
    }
  }
}

/// The client of ``ApplicationProtocol/onLoopback(readTimeout:_:)``: one keep-alive connection.
struct LoopbackClient: Sendable {
  let client: TestClient

  /// An answer: its status, headers and whole body.
  struct Response: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer
  }

  /// Sends one request and hands its answer to `check`.
  func execute<Return>(
    uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil,
    _ check: (Response) throws -> Return
  ) async throws -> Return {
    var headers = headers
    headers[.connection] = "keep-alive"
    let request = TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body)
    let answer = try await client.execute(request)
    return try check(Response(status: answer.status, headers: answer.headers, body: answer.body ?? ByteBuffer()))
  }
}

/// The tested application on port 0 of 127.0.0.1, reporting the port it was given.
private struct LoopbackApplication<Base: ApplicationProtocol>: ApplicationProtocol, Service {
  let base: Base
  private let ports = AsyncStream.makeStream(of: Int.self)

  /// The port the server listens on, once it does.
  var port: Int {
    get async {
      for await port in ports.stream { return port }
      return 0
    }
  }

  var responder: Base.Responder { get async throws { try await base.responder } }
  var server: HTTPServerBuilder { base.server }
  var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
  var configuration: ApplicationConfiguration { base.configuration.with(address: .hostname("127.0.0.1", port: 0)) }
  var logger: Logger { base.logger }
  var services: [any Service] { base.services }
  var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

  @Sendable func onServerRunning(_ channel: any Channel) async {
    await base.onServerRunning(channel)
    ports.continuation.yield(channel.localAddress?.port ?? 0)
    ports.continuation.finish()
  }
}
