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

extension CollectorConfiguration {
  /// The HTTP/1 server with the configured read and idle timeouts.
  var server: HTTPServerBuilder {
    let readTimeout = TimeAmount.milliseconds(Int64(readTimeoutSeconds * 1000))
    return .http1(
      configuration: .init(
        additionalChannelHandlers: [ConnectionGuardHandler(timeout: readTimeout)],
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
