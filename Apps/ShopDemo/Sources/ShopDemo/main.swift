import CollectorReports
import Foundation
import Logging
import ShopDemoKit

// shop-demo: the super app on the command line, with a collector inside.
//
//   shop-demo [--users N] [--weeks W] [--seed S] [--data DIR] [--exit]   simulate, report, serve the dashboard
//   shop-demo --scripted [--quiet] [--data DIR]                           one scripted session, every service's shape
let arguments = CommandLine.arguments

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("shop-demo: \(message)\n".utf8))
  exit(64)
}

func value(_ name: String) -> String? {
  guard let index = arguments.firstIndex(of: name) else { return nil }
  guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else { fail("\(name) needs a value") }
  return arguments[index + 1]
}

func number(_ name: String, default fallback: Int, range: ClosedRange<Int>) -> Int {
  guard let text = value(name) else { return fallback }
  guard let parsed = Int(text), range.contains(parsed) else {
    fail("\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), not \(text)")
  }
  return parsed
}

let known: Set<String> = ["--users", "--weeks", "--seed", "--data", "--exit", "--scripted", "--quiet", "--help"]
for argument in arguments.dropFirst() where argument.hasPrefix("--") && !known.contains(argument) {
  fail("unknown option \(argument) (see --help)")
}
if arguments.contains("--help") {
  print(
    """
    usage: shop-demo [--users N] [--weeks W] [--seed S] [--data DIR] [--exit]
           shop-demo --scripted [--quiet] [--data DIR]

    Starts a collector inside the process (SQLite in DIR, default ./shop-demo-data) and, by default,
    simulates N users (default 300) over W weeks (default 4) through the real presenters of every
    Trendyol and Dolap Lite feature and the real services (log, collector, Firebase, Mixpanel) over HTTP
    on 127.0.0.1; prints the overview, top events, retention and a funnel, then serves the dashboard at
    the printed link until Ctrl-C (--exit stops after printing). --scripted runs one scripted session
    instead and shows each service's own shape of every event.
    """)
  exit(0)
}

let data = URL(fileURLWithPath: value("--data") ?? "shop-demo-data")
var logger = Logger(label: "shop-demo.events") { StreamLogHandler.standardOutput(label: $0) }

if arguments.contains("--scripted") {
  logger.logLevel = arguments.contains("--quiet") ? .critical : .info
  print("shop-demo: Trendyol with Dolap Lite inside, every feature driven through its presenter\n")
  do {
    let outcome = try await ShopDemo(logger: logger, dataDirectory: data).run()
    print(ShopDemo.render(outcome))
  } catch {
    FileHandle.standardError.write(Data("shop-demo: \(error)\n".utf8))
    exit(1)
  }
  exit(0)
}

let users = number("--users", default: 300, range: 1...100_000)
let weeks = number("--weeks", default: 4, range: 1...4)
let seed = UInt64(number("--seed", default: 2026, range: 0...Int(Int32.max)))
logger.logLevel = .critical  // the system log of thousands of events would drown the tables
print("shop-demo: \(users) users over \(weeks) weeks, Trendyol with Dolap Lite inside (seed \(seed))")
let interactive = isatty(2) == 1
do {
  let outcome = try await ShopDemo(logger: logger, dataDirectory: data).simulate(
    users: users, weeks: weeks, seed: seed, stopsOnSignal: !arguments.contains("--exit")
  ) { done, total in
    guard interactive || done == total else { return }
    let filled = done * 30 / max(1, total)
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 30 - filled)
    FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) users".utf8))
    if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
  }
  for (title, table) in outcome.reports { print("\n== \(title) ==\n" + table.text(), terminator: "") }
  if arguments.contains("--exit") {
    try await outcome.collector.stop()
  } else {
    let day = 86_400_000 as Int64
    let from = String(
      ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(outcome.from) / 1000)).prefix(10))
    let to = String(
      ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(outcome.to - day) / 1000)).prefix(10))
    print("\ndashboard: \(outcome.collector.dashboardLink("/?app=ty&from=\(from)&to=\(to)"))")
    print("(Ctrl-C stops the collector; the data stays in \(data.path))")
    fflush(nil)  // also into a pipe or a file: the link shows now, not at exit
    try await outcome.collector.waitUntilStopped()
  }
} catch {
  FileHandle.standardError.write(Data("shop-demo: \(error)\n".utf8))
  exit(1)
}
