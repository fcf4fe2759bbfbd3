import ArgumentParser
import CollectorReports
import Foundation
import TrackerCtlKit

struct DropsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "drops",
    abstract: "What devices reported dropping, by service and reason (over --url).",
    discussion: """
      Trackers keep a durable record of every event they drop (disk budget, consent, sampling, \
      validation, vendor limits, refused by the server) and send it with their next batch. This lists \
      what the collector received for the range (by arrival; default: the last 7 days). Needs a read key.
      """)

  @Option(help: "The collector's base URL (or TRACKERCTL_URL).") var url: String?
  @Option(help: "A read key (or TRACKERCTL_KEY).") var key: String?
  @Option(help: "The app (its write key's).") var app: String
  @Option(help: "From (a day, an ISO 8601 time or ms since 1970).") var from: String?
  @Option(help: "To, exclusive.") var to: String?
  @Option(help: "Only events of this app name.") var appName: String?
  @Flag(help: "JSON instead of a table.") var json = false

  func run() async throws {
    let remote = try QuarantineCommand.Remote.parse(
      (url.map { ["--url", $0] } ?? []) + (key.map { ["--key", $0] } ?? []))
    let drops = try await remote.client().clientDrops(app: app, from: from, to: to, appName: appName)
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys]
      print(String(decoding: try encoder.encode(drops), as: UTF8.self))
      return
    }
    print(drops.summary)
    if !drops.drops.isEmpty { print(drops.table.text(), terminator: "") }
  }
}
