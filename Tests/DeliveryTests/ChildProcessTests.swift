import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The test processes' launcher (TestSupport's `ChildProcess`), which the crash, lifecycle, gzip and
/// browser tests rely on.
@Suite("ChildProcess")
struct ChildProcessTests {
  @Test("the exit status and the signal that ended a child", arguments: [0, 3, 77])
  func exitStatus(code: Int32) throws {
    let child = try ChildProcess("/bin/sh", arguments: ["-c", "exit \(code)"])
    #expect(child.waitUntilExit() == .exited(code))
    #expect(!child.isRunning)
  }

  @Test func aKilledChildReportsItsSignal() throws {
    let child = try ChildProcess("/bin/sleep", arguments: ["30"])
    #expect(child.isRunning)
    child.send(SIGKILL)
    #expect(child.waitUntilExit() == .signalled(SIGKILL))
  }

  /// Input through one pipe, output through another; the output reaches end-of-file when the child
  /// exits, so the test's own ends are the only ones left open.
  @Test func pipesCarryInputAndOutput() throws {
    let input = Pipe()
    let output = Pipe()
    let child = try ChildProcess(
      "/bin/sh", arguments: ["-c", "tr a-z A-Z"], environment: ["PATH": "/usr/bin:/bin"], input: .pipe(input),
      output: .pipe(output))
    input.fileHandleForWriting.write(Data("hello".utf8))
    try input.fileHandleForWriting.close()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(text == "HELLO")
    #expect(child.waitUntilExit() == .exited(0))
  }

  /// A descriptor the test process holds (here an open pipe) does not leak into the child: only the
  /// three standard streams are open in it.
  @Test func theChildGetsOnlyTheStandardStreams() throws {
    let held = Pipe()
    let output = Pipe()
    let child = try ChildProcess(
      "/bin/sh", arguments: ["-c", "ls /proc/$$/fd"], environment: ["PATH": "/usr/bin:/bin"],
      output: .pipe(output))
    let listed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(child.waitUntilExit() == .exited(0))
    let descriptors = Set(listed.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) })
    #expect(descriptors == [0, 1, 2], "\(listed)")
    #expect(!descriptors.contains(held.fileHandleForReading.fileDescriptor))
  }

  /// A child leading its own group is signalled with what it started: the shell's background
  /// `sleep` (its pid written to the output) ends with it.
  @Test func aGroupEndsTogether() async throws {
    let output = Pipe()
    let child = try ChildProcess(
      "/bin/sh", arguments: ["-c", "sleep 30 & echo $!; wait"], environment: ["PATH": "/usr/bin:/bin"],
      output: .pipe(output), ownGroup: true)
    let line = await offThePool { output.fileHandleForReading.availableData }
    let printed = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let grandchild = try #require(pid_t(printed))
    #expect(kill(grandchild, 0) == 0, "the shell's sleep runs")
    child.send(SIGKILL)
    #expect(await child.exit() == .signalled(SIGKILL))
    // The sleep, reparented, is reaped by init: it is gone (or a zombie for a moment).
    var gone = false
    for _ in 0..<200 where !gone {
      gone = kill(grandchild, 0) != 0 || Self.isZombie(grandchild)
      if !gone { try await Task.sleep(for: .milliseconds(10)) }
    }
    #expect(gone, "the group's sleep was killed with the shell")
  }

  /// A test cancelled while it waits (a test past its time limit) kills its child and goes on,
  /// rather than waiting for a child that never ends.
  @Test func aCancelledWaitKillsTheChild() async throws {
    let child = try ChildProcess("/bin/sleep", arguments: ["600"])
    let waiting = Task { await child.exit() }
    try await Task.sleep(for: .milliseconds(50))
    waiting.cancel()
    #expect(await waiting.value == .signalled(SIGKILL))
  }

  private static func isZombie(_ pid: pid_t) -> Bool {
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
  }

  @Test func aMissingExecutableIsAClearError() {
    #expect(throws: ChildProcessError.self) { try ChildProcess("/nonexistent/helper") }
  }
}
