import ArgumentParser
import CollectorReports
import Foundation
import Logging
import ShopDemoKit

/// `shop-demo`: the super app on the command line, with a collector inside.
@main
struct ShopDemoCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "shop-demo",
    abstract: "Trendyol with Dolap Lite inside, tracked end to end into a collector in the same process.",
    discussion: """
      Starts a collector inside the process (SQLite in --data) and, by default, simulates --users users \
      over --weeks weeks through the real presenters of every Trendyol and Dolap Lite feature and the real \
      services (log, collector, Firebase, Mixpanel) over HTTP on 127.0.0.1; prints the overview, top \
      events, retention, a funnel, revenue and the top products, then serves the dashboard at the \
      printed link until Ctrl-C (--exit stops after printing). --scripted runs one scripted session instead and shows each service's own \
      shape of every event.
      """)

  @Option(help: "Simulated users (1...100000).")
  var users = 300
  @Option(help: "Simulated weeks (1...4).")
  var weeks = 4
  @Option(help: "The simulation's random seed (0...2147483647).")
  var seed = 2026
  @Option(help: "The collector's data directory.")
  var data = "shop-demo-data"
  @Flag(help: "Stop after printing the reports instead of serving the dashboard.")
  var exit = false
  @Flag(help: "Run one scripted session and show every service's shape of each event.")
  var scripted = false
  @Flag(help: "With --scripted: print only the summary, not the system log.")
  var quiet = false
  @Flag(help: "Print the delivery reports an app sees for a wrong write key, a refused event and a good batch.")
  var deliveryReport = false

  func validate() throws {
    for (name, value, range) in [
      ("--users", users, 1...100_000), ("--weeks", weeks, 1...4), ("--seed", seed, 0...Int(Int32.max)),
    ]
    where !range.contains(value) {
      throw ValidationError("\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), not \(value)")
    }
    if quiet && !scripted { throw ValidationError("--quiet applies to --scripted only") }
  }

  func run() async throws {
    let directory = URL(fileURLWithPath: data)
    if deliveryReport {
      for line in try await DeliveryCheck.run(dataDirectory: directory) { print(line) }
      return
    }
    var logger = Logger(label: "shop-demo.events") { StreamLogHandler.standardOutput(label: $0) }
    if scripted {
      logger.logLevel = quiet ? .critical : .info
      print("shop-demo: Trendyol with Dolap Lite inside, every feature driven through its presenter\n")
      print(ShopDemo.render(try await ShopDemo(logger: logger, dataDirectory: directory).run()))
      return
    }
    logger.logLevel = .critical  // the system log of thousands of events would drown the tables
    print("shop-demo: \(users) users over \(weeks) weeks, Trendyol with Dolap Lite inside (seed \(seed))")
    let outcome = try await ShopDemo(logger: logger, dataDirectory: directory).simulate(
      users: users, weeks: weeks, seed: UInt64(seed), stopsOnSignal: !exit, progress: Self.progress)
    for (title, table) in outcome.reports { print("\n== \(title) ==\n" + table.text(), terminator: "") }
    if exit {
      try await outcome.collector.stop()
      return
    }
    print("\ndashboard: \(outcome.collector.dashboardLink(Self.dashboardPath(from: outcome.from, to: outcome.to)))")
    print("sign in with this run's admin key: \(outcome.collector.adminKey)")
    print("(Ctrl-C stops the collector; the data stays in \(directory.path))")
    fflush(nil)  // also into a pipe or a file: the link shows now, not at exit
    try await outcome.collector.waitUntilStopped()
  }

  /// A progress bar on standard error (only the last line when it is not a terminal).
  @Sendable static func progress(done: Int, total: Int) {
    guard isatty(2) == 1 || done == total else { return }
    let filled = done * 30 / max(1, total)
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 30 - filled)
    FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) users".utf8))
    if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
  }

  /// The dashboard page of the simulated period (`to` is exclusive, the page's is inclusive).
  static func dashboardPath(from: Int64, to: Int64) -> String {
    func day(_ milliseconds: Int64) -> String {
      String(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000)).prefix(10))
    }
    return "/?app=ty&from=\(day(from))&to=\(day(to - 86_400_000))"
  }
}
