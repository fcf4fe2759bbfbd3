import Foundation
import Logging
import ShopDemoKit

// shop-demo: the super app on the command line. `--quiet` hides the system-log lines; `--data DIR`
// chooses where the embedded collector's SQLite file and the outboxes live (default ./shop-demo-data).
let arguments = CommandLine.arguments
let quiet = arguments.contains("--quiet")
if arguments.contains("--help") {
  print(
    """
    usage: shop-demo [--quiet] [--data DIR]
      Starts a collector inside the process (SQLite in DIR, default ./shop-demo-data), drives every
      Trendyol and Dolap Lite feature through the real services (log, collector, Firebase, Mixpanel)
      over HTTP on 127.0.0.1, and shows what the collector stored for each.
    """)
} else {
  var data = URL(fileURLWithPath: "shop-demo-data")
  if let index = arguments.firstIndex(of: "--data") {
    guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else {
      FileHandle.standardError.write(Data("shop-demo: --data needs a directory\n".utf8))
      exit(64)
    }
    data = URL(fileURLWithPath: arguments[index + 1])
  }
  var logger = Logger(label: "shop-demo.events") { StreamLogHandler.standardOutput(label: $0) }
  logger.logLevel = quiet ? .critical : .info
  print("shop-demo: Trendyol with Dolap Lite inside, every feature driven through its presenter\n")
  if !quiet { print("== System log (LogService, shared by both products) ==") }
  do {
    let outcome = try await ShopDemo(logger: logger, dataDirectory: data).run()
    print(ShopDemo.render(outcome))
  } catch {
    FileHandle.standardError.write(Data("shop-demo: \(error)\n".utf8))
    exit(1)
  }
}
