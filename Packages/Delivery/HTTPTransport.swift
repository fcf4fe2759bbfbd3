public import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One HTTP request as delivery sends it.
public struct HTTPRequest: Sendable, Hashable {
  /// Where to.
  public var url: URL
  /// `POST` unless said otherwise.
  public var method: String
  /// Header fields, in order.
  public var headers: [String: String]
  /// The body, already encoded (and compressed, with `Content-Encoding` set).
  public var body: [UInt8]

  /// Creates a request.
  public init(url: URL, method: String = "POST", headers: [String: String] = [:], body: [UInt8] = []) {
    self.url = url
    self.method = method
    self.headers = headers
    self.body = body
  }
}

/// One HTTP response.
public struct HTTPResponse: Sendable, Hashable {
  /// The status code.
  public var status: Int
  /// Header fields, names in lower case.
  public var headers: [String: String]
  /// The body.
  public var body: [UInt8]

  /// Creates a response; header names are lower-cased.
  public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
    self.status = status
    self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
    self.body = body
  }
}

/// Sends HTTP requests for delivery: URLSession by default, anything else (a test double, an
/// async-http-client wrapper) behind this protocol.
///
/// A transport throws only for transport failures (no connection, timeout, TLS); every HTTP status,
/// error or not, is a response.
public protocol HTTPTransport: Sendable {
  /// Sends `request` and returns the response.
  func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// The default transport: `URLSession` (FoundationNetworking on Linux), no main queue, no run loop.
public struct URLSessionTransport: HTTPTransport {
  private let session: URLSession
  private let timeout: TimeInterval

  /// Creates a transport over an ephemeral session (no cookies, no cache) with a per-request timeout.
  public init(timeout: TimeInterval = 30) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = timeout
    configuration.httpCookieStorage = nil
    configuration.urlCache = nil
    session = URLSession(configuration: configuration)
    self.timeout = timeout
  }

  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    var urlRequest = URLRequest(url: request.url, timeoutInterval: timeout)
    urlRequest.httpMethod = request.method
    for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
    urlRequest.httpBody = Data(request.body)
    let session = session
    return try await withCheckedThrowingContinuation { continuation in
      let task = session.dataTask(with: urlRequest) { data, response, error in
        if let error {
          continuation.resume(throwing: error)
        } else if let http = response as? HTTPURLResponse {
          var headers: [String: String] = [:]
          for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
          }
          continuation.resume(
            returning: HTTPResponse(status: http.statusCode, headers: headers, body: [UInt8](data ?? Data())))
        } else {
          continuation.resume(throwing: URLError(.badServerResponse))
        }
      }
      task.resume()
    }
  }
}
