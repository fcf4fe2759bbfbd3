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
      Exit status: 0 done, 1 a usage or local failure, 2 the collector refused the request, 3 it could \
      not be reached.
      """,
    subcommands: [
      ReportCommand.self, TailCommand.self, ExportCommand.self, KeysCommand.self, QuarantineCommand.self,
      LoadCommand.self, DropsCommand.self, PlanCommand.self,
    ]
  )

  /// Runs the command; exits 0 when it worked, 1 for a usage or local failure, 2 when the collector
  /// refused the request, 3 when it could not be reached — each failure said in one line.
  static func main() async {
    do {
      var command = try parseAsRoot()
      if var command = command as? any AsyncParsableCommand {
        try await command.run()
      } else {
        try command.run()
      }
    } catch let error as CommandError {
      FileHandle.standardError.write(Data("trackerctl: \(error.description)\n".utf8))
      Foundation.exit(error.exitCode)
    } catch {
      let code = exitCode(for: error)
      guard code != .success else { exit(withError: error) }  // --help, --version
      FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
      Foundation.exit(1)
    }
  }
}
