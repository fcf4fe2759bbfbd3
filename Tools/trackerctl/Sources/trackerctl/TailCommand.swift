import ArgumentParser
import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import TrackerCtlKit

struct TailCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "tail", abstract: "Prints events as they arrive, until Ctrl-C (or --count events).")
  @OptionGroup var origin: OriginOptions
  @Option(help: "The app.") var app: String
  @Option(help: "Only this event.") var event: String?
  @Option(help: "Only this platform.") var platform: String?
  @Option(help: "Seconds between polls.") var every: Double = 1
  @Option(help: "Seconds back each poll looks (events arriving later than this after they occurred are not shown).")
  var lookback: Int = 600
  @Option(help: "Stop after this many events.") var count: Int?
  @Flag(help: "Print NDJSON lines.") var json = false

  func run() async throws {
    guard every > 0, every <= 3_600 else { throw ValidationError("--every must be above 0 and at most 3600 seconds") }
    guard (1...31_622_400).contains(lookback) else {
      throw ValidationError("--lookback must be 1 to 31622400 seconds (366 days)")
    }
    if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    var parameters = ["app": app]
    if let event { parameters["event"] = event }
    if let platform { parameters["platform"] = platform }
    var tail = try Tail(origin: try await origin.origin(), parameters: parameters, lookback: Int64(lookback) * 1_000)
    var printed = 0
    while count.map({ printed < $0 }) ?? true {
      do {
        for row in try await tail.poll() where count.map({ printed < $0 }) ?? true {
          // Unbuffered, so a pipe (`| grep`) sees each event at once.
          FileHandle.standardOutput.write(Data((json ? try Tail.json(row) : Tail.line(row)).utf8))
          printed += 1
        }
      } catch let error as FieldError {
        throw ValidationError("--\(error.field): \(error.reason)")
      }
      if count.map({ printed >= $0 }) ?? false { break }
      try await Task.sleep(for: .milliseconds(Int(every * 1_000)))
    }
  }
}
