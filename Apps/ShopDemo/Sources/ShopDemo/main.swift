import Logging
import ShopDemoKit

// shop-demo: the super app on the command line. `--quiet` hides the system-log lines.
let quiet = CommandLine.arguments.contains("--quiet")
if CommandLine.arguments.contains("--help") {
  print(
    "usage: shop-demo [--quiet]\n  Drives every Trendyol and Dolap Lite feature and shows what each service received.")
} else {
  var logger = Logger(label: "shop-demo.events") { StreamLogHandler.standardOutput(label: $0) }
  logger.logLevel = quiet ? .critical : .info
  print("shop-demo: Trendyol with Dolap Lite inside, every feature driven through its presenter\n")
  if !quiet { print("== System log (LogService, shared by both products) ==") }
  let outcome = await ShopDemo(logger: logger).run()
  print(ShopDemo.render(outcome))
}
