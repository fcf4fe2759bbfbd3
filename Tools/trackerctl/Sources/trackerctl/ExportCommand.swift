import ArgumentParser
import CollectorReports
import CollectorStore
import Foundation
import TrackerCtlKit

struct ExportCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export", abstract: "Writes a range of events as NDJSON or CSV, with a progress bar.")
  @OptionGroup var origin: OriginOptions
  @OptionGroup var filter: FilterOptions
  @Option(help: "ndjson or csv.") var format = "ndjson"
  @Option(help: "The file to write (default: standard output).") var output: String?

  func run() async throws {
    guard format == "ndjson" || format == "csv" else { throw ValidationError("--format must be ndjson or csv") }
    let handle: FileHandle
    if let output {
      guard FileManager.default.createFile(atPath: output, contents: nil) else {
        throw ValidationError("cannot write \(output)")
      }
      handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
    } else {
      handle = FileHandle.standardOutput
    }
    let showsProgress = output != nil && isatty(2) == 1
    let written = try await TrackerCtl.export(
      parameters: filter.parameters, origin: try await origin.origin(), format: format == "csv" ? .csv : .json,
      to: { handle.write(Data($0.utf8)) },
      progress: { done, total in
        if showsProgress { FileHandle.standardError.write(Data(("\r" + TrackerCtl.progressBar(done, total)).utf8)) }
      })
    if output != nil {
      try handle.close()
      FileHandle.standardError.write(Data("\nexported \(written) events to \(output!)\n".utf8))
    }
  }
}
