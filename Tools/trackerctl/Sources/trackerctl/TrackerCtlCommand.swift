import ArgumentParser
import CollectorReports
import CollectorStore
import Foundation
import TrackerCtlKit

/// `trackerctl`: reports, keys and exports from the terminal, over a collector's HTTP API or its
/// store directly.
@main
struct TrackerCtlCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "trackerctl",
    abstract: "Reports, keys and exports of a CoreTracker collector.",
    discussion: """
      Reads a running collector (--url with --key, a read or admin key; or TRACKERCTL_URL and TRACKERCTL_KEY) \
      or its store directly (--sqlite FILE, or --postgres-url URL).
      """,
    subcommands: [
      ReportCommand.self, TailCommand.self, ExportCommand.self, KeysCommand.self, QuarantineCommand.self,
      LoadCommand.self, DropsCommand.self,
    ]
  )
}
