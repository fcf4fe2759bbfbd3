import ArgumentParser
import CollectorReports
import CollectorStore
import Foundation
import TrackerCtlKit

struct QuarantineCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "quarantine",
    abstract: "Lists, counts, shows, exports, replays and purges entries the collector quarantined (over --url).",
    discussion: """
      Entries refused by the rules are kept in the quarantine with every reason. Raise a limit in the \
      collector's configuration (or deploy a fix), restart it, then `trackerctl quarantine replay`: \
      entries that now pass are stored, once, however often a replay runs; the rest stay with their \
      new reasons. Reading needs a read key; replay and purge an admin key.
      """,
    subcommands: [List.self, Count.self, Show.self, Export.self, Replay.self, Purge.self])

  struct Remote: ParsableArguments {
    @Option(help: "The collector's base URL (or TRACKERCTL_URL).") var url: String?
    @Option(help: "A read key, or an admin key for replay and purge (or TRACKERCTL_KEY).") var key: String?
    @Option(help: "Only this app.") var app: String?

    func client() throws -> QuarantineClient {
      let environment = ProcessInfo.processInfo.environment
      guard let text = url ?? environment["TRACKERCTL_URL"], let base = URL(string: text), base.scheme != nil else {
        throw ValidationError("quarantine needs --url (or TRACKERCTL_URL): replays run in the collector")
      }
      guard let key = key ?? environment["TRACKERCTL_KEY"], !key.isEmpty else {
        throw ValidationError("--url needs --key (or TRACKERCTL_KEY)")
      }
      return QuarantineClient(base: base, key: key)
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Held entries, newest first.")
    @OptionGroup var remote: Remote
    @Option(help: "At most this many (default 100).") var limit = 100
    @Flag(help: "Replayed entries too.") var replayed = false

    func run() async throws {
      let entries = try await remote.client().list(app: remote.app, limit: limit, replayed: replayed)
      print(QuarantineClient.table(entries).text(), terminator: "")
    }
  }

  struct Count: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Held entries by app, route and reason.")
    @OptionGroup var remote: Remote

    func run() async throws { print(try await remote.client().counts(app: remote.app).text(), terminator: "") }
  }

  struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "One entry: its reasons and the entry as it came.")
    @OptionGroup var remote: Remote
    @Argument(help: "The entry's id, as `quarantine list` shows it.") var id: String

    func run() async throws {
      let entries = try await remote.client().list(app: remote.app, limit: 100_000, replayed: true)
      guard let entry = entries.first(where: { $0.id == id }) else {
        throw ValidationError("no quarantined entry has the id \(id)")
      }
      print("\(entry.route) · \(entry.app) · received \(ReportTime.iso(entry.receivedAt))")
      for reason in entry.reasons { print("  \(reason)") }
      print(entry.entry)
    }
  }

  struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every entry as one JSON object per line.")
    @OptionGroup var remote: Remote
    @Flag(help: "Replayed entries too.") var replayed = false

    func run() async throws {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      for entry in try await remote.client().list(app: remote.app, limit: 100_000, replayed: replayed) {
        print(String(decoding: try encoder.encode(entry), as: UTF8.self))
      }
    }
  }

  struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Reads every held entry again under the collector's rules now; stores those that pass, once.")
    @OptionGroup var remote: Remote

    func run() async throws {
      let (stored, kept) = try await remote.client().replay(app: remote.app)
      print("stored \(stored), still refused \(kept)")
    }
  }

  struct Purge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Deletes entries that arrived before a time.")
    @OptionGroup var remote: Remote
    @Option(help: "A day (2026-11-01), an ISO 8601 time or ms.") var before: String

    func run() async throws {
      print("deleted \(try await remote.client().purge(app: remote.app, before: before))")
    }
  }
}
