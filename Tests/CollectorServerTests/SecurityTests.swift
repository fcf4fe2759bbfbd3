import CollectorRuntime
import CollectorServer
import CollectorStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import TestSupport
import Testing

/// Keys, roles and sessions through Hummingbird's test client: no key in a URL, three roles, CSRF
/// on every change made with a session, sessions kept in the store, headers, rate limit, audit.
@Suite("Keys and sessions")
struct SecurityTests {
  static func request(
    _ client: some TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get, cookie: String? = nil,
    bearer: String? = nil, headers extra: HTTPFields = [:], body: String? = nil
  ) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: String) {
    var headers = extra
    if let cookie { headers[.cookie] = cookie }
    if let bearer { headers[.authorization] = "Bearer \(bearer)" }
    if body != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
    return try await client.execute(
      uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
    ) { ($0.status, $0.headers, String(buffer: $0.body)) }
  }

  /// The CSRF token a page of the session shows in its sign-out form.
  static func csrf(_ client: some TestClientProtocol, cookie: String) async throws -> String {
    let page = try await request(client, "/dashboard/counters?app=ty", cookie: cookie).body
    let marker = #"name="csrf" value=""#
    let start = try #require(page.range(of: marker)).upperBound
    return String(page[start...].prefix { $0 != "\"" })
  }

  @Test("a key in the sign-in URL is refused, never honoured")
  func keyInURL() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let answer = try await Self.request(client, "/login?key=\(adminKey)&next=/")
      #expect(answer.status == .badRequest && answer.headers[.setCookie] == nil)
      #expect(answer.body.contains("never taken from a URL") && answer.body.contains(#"method="post""#))
      #expect(!answer.body.contains(adminKey))
      let form = try await Self.request(client, "/login?next=/dashboard/events")
      #expect(form.status == .ok && form.body.contains(#"value="/dashboard/events""#))
    }
  }

  @Test("a read key sees every report and the dashboard, and gets 403 on erasure and the audit trail")
  func readRole() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for name in ["overview", "top-events", "active-devices", "retention", "funnel", "revenue", "counters"] {
        let steps = name == "funnel" ? "&steps=a,b" : ""
        let answer = try await Self.request(client, "/v1/reports/\(name)?app=ty\(steps)", bearer: readKey)
        #expect(answer.status == .ok, "\(name): \(answer.body)")
      }
      let erase = try await Self.request(client, "/v1/events?app=ty&deviceId=d", method: .delete, bearer: readKey)
      #expect(erase.status == .forbidden && erase.body.contains("needs an admin key"), "\(erase.body)")
      let session = try #require(try await signIn(client, key: readKey).cookie)
      #expect(try await Self.request(client, "/", cookie: session).status == .ok)
      let token = try await Self.csrf(client, cookie: session)
      let sessionErase = try await Self.request(
        client, "/v1/events?app=ty&deviceId=d", method: .delete, cookie: session,
        headers: [.init("X-CSRF-Token")!: token])
      #expect(sessionErase.status == .forbidden)
      #expect(try await Self.request(client, "/dashboard/audit", cookie: session).status == .forbidden)
      #expect(try await Self.request(client, "/v1/audit", bearer: readKey).status == .forbidden)
      let page = try await Self.request(client, "/", cookie: session).body
      #expect(!page.contains("/dashboard/audit"), "the navigation offers a read key no admin page")
      let write = try await Self.request(client, "/v1/reports/overview?app=ty", bearer: writeKey)
      #expect(write.status == .forbidden && write.body.contains("needs a read key"))
    }
  }

  @Test("a change made with a session needs its CSRF token")
  func csrfRequired() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let session = try #require(try await signIn(client, key: adminKey).cookie)
      let token = try await Self.csrf(client, cookie: session)
      let erase = "/v1/events?app=ty&deviceId=nobody"
      #expect(try await Self.request(client, erase, method: .delete, cookie: session).status == .forbidden)
      let wrong: HTTPFields = [.init("X-CSRF-Token")!: String(repeating: "0", count: 64)]
      #expect(
        try await Self.request(client, erase, method: .delete, cookie: session, headers: wrong).status == .forbidden)
      let right: HTTPFields = [.init("X-CSRF-Token")!: token]
      #expect(try await Self.request(client, erase, method: .delete, cookie: session, headers: right).status == .ok)
      #expect(try await Self.request(client, "/logout", method: .post, cookie: session, body: "").status == .forbidden)
      #expect(try await Self.request(client, "/", cookie: session).status == .ok, "a refused sign-out ends nothing")
      let out = try await Self.request(client, "/logout", method: .post, cookie: session, body: "csrf=\(token)")
      #expect(out.status == .seeOther && out.headers[.setCookie]?.contains("Max-Age=0") == true)
      #expect(try await Self.request(client, "/", cookie: session).status == .unauthorized)
    }
  }

  @Test("revoking a key ends the sessions begun with it")
  func revokedKeyEndsSessions() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let session = try #require(try await signIn(client, key: readKey).cookie)
      let id = AccessKeys.record(for: readKey, app: "*", scope: .read, now: 0).id
      #expect(try await collector.store.revokeKey(id: id, at: 1))
      #expect(try await Self.request(client, "/dashboard/counters", cookie: session).status == .unauthorized)
    }
  }

  @Test("a session outlives a collector restart on the same store")
  func sessionSurvivesRestart() async throws {
    let path = TestFiles.unique("restart")
      .appendingPathComponent("collector.sqlite").path
    let first = try await makeCollector(path: path)
    let cookie = try await first.application(closesStore: false).test(.router) { client async throws in
      try #require(try await signIn(client, key: adminKey).cookie)
    }
    try await first.shutdown()
    let second = try await makeCollector(path: path)
    try await second.application(closesStore: false).test(.router) { client async throws in
      let answer = try await Self.request(client, "/dashboard/counters", cookie: cookie)
      #expect(answer.status == .ok)
    }
    try await second.store.close()
  }

  @Test("sessions end when idle too long, when too old, and when signed out", arguments: [false, true])
  func sessionExpiry(byAge: Bool) async throws {
    let collector = try await makeCollector()
    let ring = SessionRing(store: collector.store, idleSeconds: 3600, lifetimeSeconds: 86_400)
    let key = KeyRecord(id: "k", app: "*", scope: .admin, hash: "", createdAt: 0)
    let start: Int64 = 1_000_000_000_000
    let started = try await ring.start(for: key, now: start)
    #expect(started.token.count == 64 && started.record.hash == AccessKeys.hash(started.token))
    #expect(try await collector.store.session(hash: started.token) == nil, "the store keeps only the hash")
    if byAge {
      // Used every 30 minutes: never idle, but too old after a day.
      var now = start
      while now + 1_800_000 <= start + 86_400_000 {
        now += 1_800_000
        #expect(try await ring.authenticate(started.token, now: now) != nil, "\(now - start)")
      }
      #expect(try await ring.authenticate(started.token, now: start + 86_400_001) == nil)
    } else {
      #expect(try await ring.authenticate(started.token, now: start + 3_600_000) != nil)
      #expect(try await ring.authenticate(started.token, now: start + 3_600_000 + 3_600_001) == nil)
    }
    let other = try await ring.start(for: key, now: start)
    try await ring.end(other.token, now: start + 1)
    #expect(try await ring.authenticate(other.token, now: start + 2) == nil)
    try await collector.store.close()
  }

  @Test("a key configured by its hash authenticates; its text never appears in the configuration")
  func hashedKey() async throws {
    let secret = "hashed-admin-key-0123456789"
    let hashed = AccessKeys.hashedPrefix + AccessKeys.hash(secret)
    let configuration = try CollectorConfiguration.resolve(
      arguments: ["admin-keys": hashed, "read-keys": "sha256:" + String(repeating: "ab", count: 32)], environment: [:])
    #expect(configuration.keys.allSatisfy { !$0.key.contains(secret) })
    #expect(throws: CollectorConfiguration.Problem.self) {
      try CollectorConfiguration.resolve(arguments: ["admin-keys": "sha256:abc"], environment: [:])
    }
    let collector = try await makeCollector()
    try await collector.keyRing.provision(configuration.keys, now: 0)
    try await collector.application(closesStore: false).test(.router) { client async throws in
      #expect(try await Self.request(client, "/v1/reports/overview?app=ty", bearer: secret).status == .ok)
      #expect(try await Self.request(client, "/v1/reports/overview?app=ty", bearer: hashed).status == .unauthorized)
    }
  }

  @Test("the cookie is Secure with the __Host- name behind a trusted TLS proxy, and never holds a key")
  func cookieFlags() async throws {
    let collector = try await makeCollector(configure: { $0.security.trustProxy = true })
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let plain = try await signIn(client, key: adminKey)
      let plainCookie = try #require(plain.headers[.setCookie])
      #expect(plainCookie.hasPrefix("collector_session=") && !plainCookie.contains("Secure"))
      let proxied = try await signIn(client, key: adminKey, headers: [.init("X-Forwarded-Proto")!: "https"])
      let cookie = try #require(proxied.headers[.setCookie])
      for flag in ["__Host-collector_session=", "; Path=/", "; HttpOnly", "; SameSite=Strict", "; Secure"] {
        #expect(cookie.contains(flag), "\(flag) in \(cookie)")
      }
      #expect(!cookie.contains(adminKey) && !cookie.contains(AccessKeys.hash(adminKey)))
    }
  }

  @Test("every dashboard page carries the security headers; sign-in attempts are rate-limited per address")
  func headersAndRateLimit() async throws {
    // Time stands still: a busy machine taking 20 s between attempts must not refill a token.
    let collector = try await makeCollector(configure: {
      $0.security.signInAttemptsPerMinute = 3
      $0.clock = { 1_800_000_000 }
    })
    try await collector.application(closesStore: false).test(.router) { client async throws in
      for uri in ["/", "/login", "/dashboard/nothing"] {
        let headers = try await Self.request(client, uri).headers
        let policy = headers[.init("Content-Security-Policy")!] ?? ""
        // Scripts only from the dashboard's own files (the live page's), never inline.
        #expect(policy.contains("frame-ancestors 'none'") && policy.contains("script-src 'self';"), "\(uri)")
        #expect(!policy.contains("'unsafe-eval'") && policy.components(separatedBy: "'unsafe-inline'").count == 2)
        #expect(policy.contains("default-src 'none'"))
        #expect(
          headers[.init("Referrer-Policy")!] == "no-referrer" && headers[.init("X-Content-Type-Options")!] == "nosniff")
      }
      var statuses: [HTTPResponse.Status] = []
      for _ in 0..<5 { statuses.append(try await signIn(client, key: "wrong-key-0123456789").status) }
      #expect(statuses.prefix(3).allSatisfy { $0 == .unauthorized } && statuses.last == .tooManyRequests, "\(statuses)")
      let limited = try await signIn(client, key: adminKey)
      #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil && limited.cookie == nil)
    }
  }

  @Test("admin actions are in the audit trail with the key's id, never the key")
  func auditTrail() async throws {
    let collector = try await makeCollector()
    try await collector.application(closesStore: false).test(.router) { client async throws in
      let erased = try await Self.request(client, "/v1/events?app=ty&deviceId=d9", method: .delete, bearer: adminKey)
      #expect(erased.status == .ok)
      let session = try #require(try await signIn(client, key: adminKey).cookie)
      let trail = try await Self.request(client, "/v1/audit", bearer: adminKey)
      let id = AccessKeys.record(for: adminKey, app: "*", scope: .admin, now: 0).id
      #expect(trail.status == .ok && trail.body.contains(#""action":"erase""#) && trail.body.contains(id))
      #expect(trail.body.contains("device d9") && trail.body.contains(#""action":"sign-in""#))
      #expect(!trail.body.contains(adminKey))
      let page = try await Self.request(client, "/dashboard/audit", cookie: session)
      #expect(page.status == .ok && page.body.contains("device d9") && !page.body.contains(adminKey))
    }
  }

  @Test("a start records configured keys and a changed retention policy in the audit trail, once each")
  func startAudit() async throws {
    let path = TestFiles.unique("audit")
      .appendingPathComponent("collector.sqlite").path
    func start(_ retention: String) async throws -> [AuditEntry] {
      let configuration = try CollectorConfiguration.resolve(
        arguments: ["sqlite-path": path, "admin-keys": adminKey, "retention": retention], environment: [:])
      let (collector, _) = try await EventCollector.open(configuration, logger: Logger(label: "test"))
      let entries = try await collector.audit.entries(limit: 100)
      try await collector.shutdown()
      return entries
    }
    let first = try await start("ty=30")
    #expect(first.filter { $0.action == "key-provision" }.count == 1)
    #expect(first.filter { $0.action == "retention" }.map(\.detail) == ["default forever; per app: ty=30"])
    #expect(try await start("ty=30").count == first.count, "an unchanged start records nothing")
    let changed = try await start("ty=7")
    #expect(changed.first?.action == "retention" && changed.first?.detail == "default forever; per app: ty=7")
    #expect(changed.allSatisfy { !$0.detail.contains(adminKey) })
  }

  @Test("no key and no session token appears in any log line written while they are used")
  func keysNeverLogged() async throws {
    let captured = CapturedLog()
    let collector = try await makeCollector(logger: Logger(label: "capture") { _ in captured })
    let tokens = try await collector.application(closesStore: false).test(.router) { client async throws in
      _ = try await Self.request(client, "/login?key=\(adminKey)")
      _ = try await signIn(client, key: "a-wrong-key-that-is-long")
      _ = try await signIn(client, key: writeKey)
      let session = try #require(try await signIn(client, key: adminKey).cookie)
      _ = try await Self.request(client, "/v1/reports/overview?app=ty", bearer: readKey)
      _ = try await Self.request(client, "/v1/events?app=ty&deviceId=x", method: .delete, bearer: adminKey)
      _ = try await Self.request(client, "/v1/events?app=ty&deviceId=x", method: .delete, bearer: readKey)
      _ = try await Self.request(client, "/metrics", bearer: "not-a-key-but-secret-text")
      return [String(session.split(separator: "=")[1])]
    }
    let lines = captured.lines
    #expect(lines.contains { $0.contains("audit") && $0.contains("erase") }, "\(lines)")
    for secret in [adminKey, readKey, writeKey, "a-wrong-key-that-is-long", "not-a-key-but-secret-text"] + tokens {
      #expect(!lines.contains { $0.contains(secret) }, "\(secret) was logged")
    }
  }
}

/// Every log line (message and metadata) written through it, for checks on what is logged.
final class CapturedLog: LogHandler, @unchecked Sendable {
  // Safe: `stored` is only touched under `lock`; the handler's own settings are set before use.
  private let lock = NSLock()
  private var stored: [String] = []
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  var lines: [String] { lock.withLock { stored } }

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    let all = metadata.merging(event.metadata ?? [:]) { $1 }
    lock.withLock { stored.append("\(event.level) \(event.message) \(all)") }
  }
}
