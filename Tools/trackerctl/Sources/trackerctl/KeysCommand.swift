import ArgumentParser
import CollectorReports
import CollectorStore
import Foundation
import TrackerCtlKit

struct KeysCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keys", abstract: "Creates, lists and revokes keys (in the store: --sqlite or --postgres-url).",
    subcommands: [Create.self, List.self, Revoke.self, Hash.self])

  struct Create: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Creates a key and prints it once.")
    @OptionGroup var origin: StoreOptions
    @Option(help: "The app its events are stored under.") var app: String?
    @Flag(help: "An admin key (everything: reports, erasure, the audit trail) instead of a write key.")
    var admin = false
    @Flag(help: "A read key (reports, the dashboard, exports; never erasure) instead of a write key.")
    var read = false

    func run() async throws {
      guard let store = try await origin.store() else {
        throw ValidationError("keys need --sqlite, --postgres-url or --clickhouse-url")
      }
      guard !(admin && read) else { throw ValidationError("a key is --admin or --read, not both") }
      let scope: KeyRecord.Scope = admin ? .admin : read ? .read : .write
      guard scope != .write || app != nil else { throw ValidationError("a write key needs --app") }
      print(try await TrackerCtl.createKey(app: app ?? "*", scope: scope, store: store))
    }
  }

  struct Hash: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Prints the form of a key the collector's configuration accepts instead of the key (sha256:<hex>).",
      discussion: "Reads the key from standard input (one line), so that it stays out of the shell's history.")

    func run() throws {
      guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !line.isEmpty else {
        throw ValidationError("give the key on standard input: trackerctl keys hash < key.txt")
      }
      print(TrackerCtl.hashedKey(line))
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Lists the keys (ids, never the keys).")
    @OptionGroup var origin: StoreOptions

    func run() async throws {
      guard let store = try await origin.store() else {
        throw ValidationError("keys need --sqlite, --postgres-url or --clickhouse-url")
      }
      print(try await TrackerCtl.listKeys(store: store).text(), terminator: "")
    }
  }

  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Revokes a key by its id.")
    @OptionGroup var origin: StoreOptions
    @Argument(help: "The key's id, as `keys list` shows it.") var id: String

    func run() async throws {
      guard let store = try await origin.store() else {
        throw ValidationError("keys need --sqlite, --postgres-url or --clickhouse-url")
      }
      try await TrackerCtl.revokeKey(id: id, store: store)
      print("revoked \(id)")
    }
  }
}
