public import ArgumentParser
public import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import TrackerCtlKit

struct ReportCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "report", abstract: "Prints a report: \(Report.names.joined(separator: ", ")).")

  @Argument(help: "The report.") var name: Report
  @OptionGroup var origin: OriginOptions
  @OptionGroup var filter: FilterOptions
  @Option(help: "events, timeseries, parameter-values: the event.") var event: String?
  @Option(help: "timeseries: hour or day.") var bucket: String?
  @Option(help: "retention: day or week.") var period: String?
  @Option(help: "retention: app-version.") var split: String?
  @Option(help: "breakdown: platform, os-version or app-version.") var by: String?
  @Option(help: "parameter-values: the parameter.") var parameter: String?
  @Option(help: "funnel: event names, comma-separated.") var steps: String?
  @Option(help: "funnel: 30m, 2h, 1d.") var window: String?
  @Option(help: "top-items: only items of this item_category.") var category: String?
  @Option(help: "top-items: only items of this item_brand.") var brand: String?
  @Option(help: "top-events, top-items, events, parameter-values: rows.") var limit: String?
  @Option(help: "events: the cursor a page printed.") var after: String?
  @Flag(help: "Print the API's JSON.") var json = false
  @Flag(help: "Print CSV.") var csv = false

  func validate() throws {
    guard !(json && csv) else { throw ValidationError("--json or --csv, not both") }
  }

  func run() async throws {
    var parameters = filter.parameters
    let extra: [(String, String?)] = [
      ("event", event), ("bucket", bucket), ("period", period), ("split", split), ("by", by),
      ("parameter", parameter), ("steps", steps), ("window", window), ("category", category), ("brand", brand),
      ("limit", limit), ("after", after),
    ]
    for (key, value) in extra { if let value { parameters[key] = value } }
    do {
      print(
        try await TrackerCtl.report(
          name.rawValue, parameters: parameters, origin: try await origin.origin(),
          format: json ? .json : csv ? .csv : .table),
        terminator: "")
    } catch let error as FieldError {
      throw ValidationError("--\(error.field): \(error.reason)")
    }
  }
}

/// `trackerctl report <name>` parses and lists the reports by their API names.
extension Report: ExpressibleByArgument {}
