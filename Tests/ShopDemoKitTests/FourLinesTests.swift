import CollectorService
import CoreTracker
import Foundation
import ShopDemoKit
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The README's first code block — four lines to the first event — run as written against a
/// collector on loopback, the event then read back through the report API.
@Suite("The README's four lines")
struct FourLinesTests {
  /// The README's snippet: the fenced block after `<!-- four-lines -->`.
  static func readmeSnippet() throws -> [String] {
    let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("README.md")
    let text = try String(contentsOf: readme, encoding: .utf8)
    let after = try #require(text.range(of: "<!-- four-lines -->")).upperBound
    let lines = text[after...].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let start = try #require(lines.firstIndex { $0.hasPrefix("```swift") }) + 1
    let end = try #require(lines[start...].firstIndex { $0.hasPrefix("```") })
    return Array(lines[start..<end])
  }

  @Test func theSnippetDeliversItsEventToTheReportAPI() async throws {
    let directory = TemporaryDirectory()
    let embedded = try await EmbeddedCollector.start(dataDirectory: directory.url, apps: ["ty"], stopsOnSignal: false)
    let collector = embedded.url.absoluteString
    let writeKey = embedded.keys["ty"]!
    defer {
      try? FileManager.default.removeItem(at: Tracker.defaultDirectory(collector: collector, writeKey: writeKey))
    }

    // The snippet's two statements, as the README writes them but for its two placeholders.
    let tracker = try Tracker.start(collector: collector, writeKey: writeKey, debug: true)
    tracker.track("signed_up", ["plan": "pro"])

    let written = [
      "import CollectorService", "import CoreTracker",
      #"let tracker = try Tracker.start(collector: "http://127.0.0.1:8080", writeKey: "YOUR_WRITE_KEY", debug: true)"#,
      #"tracker.track("signed_up", ["plan": "pro"])"#,
    ]
    #expect(try Self.readmeSnippet() == written, "the README's four lines are the ones run here")

    await tracker.flush()
    var request = URLRequest(url: embedded.url.appendingPathComponent("v1/reports/top-events"))
    request.url = URL(string: request.url!.absoluteString + "?app=ty")
    request.setValue("Bearer \(embedded.adminKey)", forHTTPHeaderField: "Authorization")
    let (data, response) = try await URLSession.shared.data(for: request)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    let body = String(decoding: data, as: UTF8.self)
    #expect(body.contains(#""name":"signed_up""#), "\(body)")
    await tracker.shutdown()
    try await embedded.stop()
  }

  @Test(arguments: ["ftp://127.0.0.1:8080", "127.0.0.1:8080", "http://", ""])
  func aCollectorAddressThatIsNotHTTPIsRefusedInWords(address: String) {
    #expect(throws: Tracker.StartError.invalidCollectorURL(address)) {
      try Tracker.start(collector: address, writeKey: "k", directory: TemporaryDirectory().url)
    }
  }
}
