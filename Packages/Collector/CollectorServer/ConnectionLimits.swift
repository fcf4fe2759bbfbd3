import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// Guards each HTTP/1 connection:
/// - closes it when a request takes longer than `timeout` to arrive, from its head to its last body
///   byte: a body sent one byte a second cannot hold a connection, a task and its buffers for long
///   (slow headers are bounded by the idle timeout: partial header bytes never count as activity);
/// - answers malformed framing (a bad chunk size, a broken header) with `400 Bad Request` and closes,
///   as NIO's own protocol error handler would (Hummingbird turns that one off): a client must not
///   read it as "too large" and split a batch that is fine.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPRequestPart
  typealias InboundOut = HTTPRequestPart
  typealias OutboundIn = HTTPResponsePart
  typealias OutboundOut = HTTPResponsePart

  private let timeout: TimeAmount
  private var deadline: Scheduled<Void>?
  private var responding = false

  init(timeout: TimeAmount) { self.timeout = timeout }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head:
      deadline?.cancel()
      let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
      deadline = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
    case .end:
      cancelDeadline()
    case .body:
      break
    }
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    switch unwrapOutboundIn(data) {
    case .head: responding = true
    case .end: responding = false
    case .body: break
    }
    context.write(data, promise: promise)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    cancelDeadline()
    if !responding, context.channel.isActive {
      let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
      context.write(wrapOutboundOut(.head(head)), promise: nil)
      context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
      responding = true
    }
    context.close(promise: nil)
    context.fireErrorCaught(error)
  }

  func channelInactive(context: ChannelHandlerContext) {
    cancelDeadline()
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) { cancelDeadline() }

  private func cancelDeadline() {
    deadline?.cancel()
    deadline = nil
  }
}

/// Connections open per client address, shared by every connection's ``AddressLimitHandler``.
final class AddressConnections: @unchecked Sendable {
  // Safe: `open` is only touched under `lock`.
  private let lock = NSLock()
  private var open: [String: Int] = [:]
  /// Connections one address may hold.
  let limit: Int

  init(limit: Int) { self.limit = limit }

  /// Counts a new connection from `address`; false (and not counted) past the limit.
  func admit(_ address: String) -> Bool {
    lock.withLock {
      let count = open[address, default: 0]
      guard count < limit else { return false }
      open[address] = count + 1
      return true
    }
  }

  /// Forgets a closed connection from `address`.
  func release(_ address: String) {
    lock.withLock {
      let count = open[address, default: 1] - 1
      open[address] = count > 0 ? count : nil
    }
  }
}

/// Closes a connection at once when its address already holds ``AddressConnections/limit``: idle
/// connections from one address cannot use up the server's connections and lock others out.
final class AddressLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPRequestPart
  typealias InboundOut = HTTPRequestPart

  private let connections: AddressConnections
  private var admitted: String?

  init(connections: AddressConnections) { self.connections = connections }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { admit(context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    admit(context)
    context.fireChannelActive()
  }

  func channelInactive(context: ChannelHandlerContext) {
    forget()
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) { forget() }

  private func admit(_ context: ChannelHandlerContext) {
    guard admitted == nil, let address = context.channel.remoteAddress?.ipAddress else { return }
    if connections.admit(address) {
      admitted = address
    } else {
      context.close(promise: nil)
    }
  }

  private func forget() {
    if let admitted { connections.release(admitted) }
    admitted = nil
  }
}

extension CollectorConfiguration {
  /// The HTTP/1 server with the configured read and idle timeouts and the per-address cap.
  var server: HTTPServerBuilder {
    let readTimeout = TimeAmount.milliseconds(Int64(readTimeoutSeconds * 1000))
    let connections = AddressConnections(limit: security.maximumConnectionsPerAddress)
    return .http1(
      configuration: .init(
        additionalChannelHandlers: [
          AddressLimitHandler(connections: connections), ConnectionGuardHandler(timeout: readTimeout),
        ],
        idleTimeout: .milliseconds(Int64(idleTimeoutSeconds * 1000))
      )
    )
  }

  /// The address, server name and connection cap.
  var applicationConfiguration: ApplicationConfiguration {
    ApplicationConfiguration(
      address: .hostname(host, port: port), serverName: "collector",
      availableConnectionsDelegate: MaximumAvailableConnections(maximumConnections)
    )
  }
}
