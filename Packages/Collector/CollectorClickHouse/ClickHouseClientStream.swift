import AsyncHTTPClient
public import CollectorStore
import Foundation
public import NIOCore
import NIOHTTP1

extension ClickHouseClient {
  /// Runs `sql` (which names its own `FORMAT`) and hands its answer to `consume` piece by piece as it
  /// arrives, from `state`; returns the state after the last piece. The answer is never held whole,
  /// so it may be larger than ``largestAnswer``, and the collector works on its first rows while
  /// the server writes the rest (a funnel's step events at 100M: 270 MB, ``ClickHouseReports``).
  ///
  /// The statement is sent again, once, only when the connection closed before its answer began
  /// (a pooled connection the server closed as the request left) or the server failed between
  /// servers (``isLostBetweenServers(_:)``): once `consume` has had a piece, a failure ends the read. The answer must end by ``timeout`` after the request left.
  public func stream<State: Sendable>(
    _ sql: String, settings: [String: String] = [:], from state: State,
    _ consume: @escaping @Sendable (inout State, ByteBuffer) throws -> Void
  ) async throws(StoreError) -> State {
    try await stream(sql, settings: settings, from: { state }, consume)
  }

  /// ``stream(_:settings:from:_:)`` from the state `start` makes while the server runs `sql` (a
  /// lookup the answer's reading needs, made in the time the server takes to its first row).
  public func stream<State: Sendable>(
    _ sql: String, settings: [String: String] = [:], from start: @escaping @Sendable () async throws -> State,
    _ consume: @escaping @Sendable (inout State, ByteBuffer) throws -> Void
  ) async throws(StoreError) -> State {
    let request = try self.request(sql, body: nil, settings: settings)
    async let started = start()
    for round in 0..<2 {
      let deadline = NIODeadline.now() + timeout
      let response: HTTPClientResponse
      do {
        response = try await http.execute(request, deadline: deadline)
      } catch let error as HTTPClientError where error == .remoteConnectionClosed && round == 0 {
        continue
      } catch {
        throw .unavailable("ClickHouse at \(url.absoluteString) cannot be reached: \(error)")
      }
      guard (200..<300).contains(response.status.code) else {
        let answer = (try? await Self.collect(response.body, by: deadline)).map { String(buffer: $0) } ?? ""
        let text = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        // Nothing of the answer has been consumed: a fault between servers is sent again, once.
        if Self.isLostBetweenServers(text) && round == 0 { continue }
        throw .unavailable("ClickHouse \(response.status.code): \(text.prefix(2_000))")
      }
      let state: State
      do { state = try await started } catch let error as StoreError { throw error } catch {
        throw .unavailable("ClickHouse's answer from \(url.absoluteString) could not be read: \(error)")
      }
      do {
        return try await Self.reading(by: deadline) { [body = response.body] in
          var state = state
          for try await piece in body { try consume(&state, piece) }
          return state
        }
      } catch is ClickHouseAnswerLate {
        let seconds = timeout.nanoseconds / 1_000_000_000
        throw .unavailable("ClickHouse at \(url.absoluteString) did not finish its answer within \(seconds) s")
      } catch let error as StoreError {
        throw error
      } catch {
        throw .unavailable("ClickHouse's answer from \(url.absoluteString) could not be read: \(error)")
      }
    }
    throw .unavailable("ClickHouse at \(url.absoluteString) closed the connection twice")
  }
}
