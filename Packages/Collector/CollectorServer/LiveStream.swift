import CollectorDashboard
import CollectorRuntime
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET /dashboard/live-events`: server-sent events of what is stored, quarantined and reported
/// dropped for one app and environment (``LiveFilter``), for a dashboard session or a read key.
///
/// Each item is one `data:` line of JSON (``LiveItem``); `event: skipped` says how many this page
/// lost by reading too slowly. A comment line every ``heartbeat`` keeps proxies from closing the
/// connection and finds a closed one. A stream lasts ``longest`` at most (the browser reconnects),
/// `limit=N` ends it after N items (scripts), and the collector's shutdown ends it. Watching never
/// slows ingestion (``LiveFeed``).
struct LiveStream: Sendable {
  let collector: EventCollector
  static let heartbeat = Duration.seconds(10)
  static let longest = Duration.seconds(300)

  func stream(_ request: Request, viewer: DashboardController.Viewer?) async throws -> Response {
    guard viewer != nil else {
      throw Refusal(.unauthorized, "session", "sign in to the dashboard, or send a read key")
    }
    let query = request.form
    let filter = try LiveFilter(query)
    let limit = try query.get("limit").map { text throws(FieldError) in
      guard let value = Int(text), value > 0 else { throw FieldError(field: "limit", reason: "is a count above 0") }
      return value
    }
    guard let watch = collector.live.watch({ filter.admits($0) }) else {
      throw Refusal(.serviceUnavailable, "", "too many live pages are open; close one", retryAfter: 5)
    }
    let live = collector.live
    let body = ResponseBody { writer in
      defer { live.stop(watch.id) }
      try await withGracefulShutdownHandler {
        try await Self.send(watch, from: live, limit: limit, to: &writer)
      } onGracefulShutdown: {
        live.stop(watch.id)
      }
      try await writer.finish(nil)
    }
    var headers = HTTPFields()
    headers[.contentType] = "text/event-stream; charset=utf-8"
    return Response(status: .ok, headers: headers, body: body)
  }

  /// Writes the watch's items, heartbeats and skip notices until it ends, the limit is reached,
  /// ``longest`` has passed or a write fails (the page closed).
  private static func send(
    _ watch: LiveFeed<LiveItem>.Watch, from live: LiveFeed<LiveItem>, limit: Int?,
    to writer: inout any ResponseBodyWriter
  ) async throws {
    let (messages, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(live.bufferSize))
    let forward = Task {
      let encoder = JSONEncoder()
      encoder.outputFormatting = .sortedKeys
      var skipped = 0
      for await item in watch.items {
        let lost = live.skipped(watch.id)
        if lost > skipped {
          skipped = lost
          continuation.yield("event: skipped\ndata: \(lost)\n\n")
        }
        let json = (try? encoder.encode(item)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        continuation.yield("data: \(json)\n\n")
      }
      continuation.finish()
    }
    let clock = Task {
      let started = ContinuousClock.now
      while ContinuousClock.now - started < longest {
        try? await Task.sleep(for: heartbeat)
        if Task.isCancelled { break }
        continuation.yield(": heartbeat\n\n")
      }
      continuation.finish()
    }
    defer {
      forward.cancel()
      clock.cancel()
    }
    try await writer.write(ByteBuffer(string: "retry: 3000\n: watching\n\n"))
    var sent = 0
    for await message in messages {
      try await writer.write(ByteBuffer(string: message))
      if message.hasPrefix("data:") { sent += 1 }
      if let limit, sent >= limit { break }
    }
  }
}
