import CollectorClickHouse
import CollectorStore
import Foundation
import NIOCore
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A stand-in ClickHouse written in Python (its standard library): a script that prints its port,
/// then `request` for each request it takes. The tests of the client's failures use it to count the
/// times a statement was sent, rather than guess them from the time taken.
struct ScriptedServer {
  let process: ChildProcess
  private let printed: FileHandle
  /// A client of the server whose statements may take `timeout`.
  let client: ClickHouseClient

  /// Starts `script` with `arguments`, and a client of it.
  init(_ script: String, arguments: [String] = [], timeout: TimeAmount) async throws {
    let output = Pipe()
    let server = try ChildProcess(
      "/usr/bin/env", arguments: ["python3", "-c", script] + arguments, output: .pipe(output))
    let line = await offThePool { output.fileHandleForReading.availableData }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    // The port line is read alone: nothing is printed after it until a request comes.
    guard let port = Int(text) else {
      server.send(SIGKILL)
      throw StoreError.unavailable("the scripted server printed no port: \(text)")
    }
    var client = try ClickHouseClient(
      url: URL(string: "http://127.0.0.1:\(port)")!, database: "t_scripted", http: ClickHouseClient.http)
    client.timeout = timeout
    (process, printed, self.client) = (server, output.fileHandleForReading, client)
  }

  /// Ends the server (at once: a test's `defer`).
  func end() { process.send(SIGKILL) }

  /// How many requests the server took, once it has ended.
  func requests() async -> Int {
    end()
    await process.exit()
    let text = String(decoding: await printed.readToEndOffThePool(), as: UTF8.self)
    return text.split(separator: "\n").filter { $0 == "request" }.count
  }
}
