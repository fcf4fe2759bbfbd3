public import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child process started with `posix_spawn`, for tests that run a helper, the collector or a
/// browser beside them.
///
/// Foundation's `Process.run()` on Linux can crash the test process: in Swift 6.3 it reads past a
/// `dirent` while it lists the open descriptors to close (fixed upstream in
/// swiftlang/swift-corelibs-foundation#5472; about one run in twenty on hosted CI). This type asks
/// the C library for the same thing — every descriptor above the three standard ones closed in the
/// child — and never touches that code.
public final class ChildProcess: @unchecked Sendable {
  // @unchecked: `ended` is only touched under `lock`; `pid` never changes.

  /// How a process ended.
  public enum Termination: Equatable, Sendable {
    /// `exit` with this status.
    case exited(Int32)
    /// Ended by this signal.
    case signalled(Int32)
  }

  /// Where one of the child's standard streams goes.
  public enum Stream {
    /// The test process's own stream.
    case inherited
    /// `/dev/null`.
    case null
    /// This descriptor (a file opened for the child); the test keeps it open.
    case handle(FileHandle)
    /// The child's end of this pipe (reading for input, writing for output), closed in the test
    /// once the child has it: the test's end sees end-of-file when the child exits.
    case pipe(Pipe)
  }

  /// The child's process id.
  public let pid: pid_t
  /// Whether the child leads a process group of its own (``send(_:)`` then signals the group: a
  /// script and the browser it started end together).
  public let leadsGroup: Bool
  private let lock = NSLock()
  private var ended: Termination?

  /// Starts `executable` (a path, not looked up in `PATH`) with `arguments`, in `environment`
  /// (the test process's own when `nil`); with `ownGroup` it leads a new process group, so that
  /// what it starts in turn is signalled with it.
  public init(
    _ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
    input: Stream = .inherited, output: Stream = .inherited, error: Stream = .inherited, ownGroup: Bool = false
  ) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    var handedOver: [FileHandle] = []
    for (stream, descriptor) in [(input, Int32(0)), (output, 1), (error, 2)] {
      switch stream {
      case .inherited: break
      case .null:
        posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
      case .handle(let handle): posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, descriptor)
      case .pipe(let pipe):
        let end = descriptor == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
        posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, descriptor)
        handedOver.append(end)
      }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var flags = ownGroup ? Int32(POSIX_SPAWN_SETPGROUP) : 0
    if ownGroup { posix_spawnattr_setpgroup(&attributes, 0) }
    #if canImport(Darwin)
      flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
    #else
      guard closeFrom(&actions, 3) == 0 else { throw ChildProcessError.couldNotStart(executable, errno: errno) }
    #endif
    // Every flag in one call: a second call replaces the first's.
    posix_spawnattr_setflags(&attributes, Int16(flags))
    let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
    var pid = pid_t()
    let status = withCStrings([executable] + arguments) { argv in
      withCStrings(environment) { envp in posix_spawn(&pid, executable, &actions, &attributes, argv, envp) }
    }
    for end in handedOver { try? end.close() }
    guard status == 0 else { throw ChildProcessError.couldNotStart(executable, errno: status) }
    self.pid = pid
    self.leadsGroup = ownGroup
  }

  /// Whether the child has not ended yet (an ended child is reaped here).
  public var isRunning: Bool { poll() == nil }

  /// Sends `signal` to the child, or to its whole group when it leads one (nothing once the child
  /// has been reaped).
  public func send(_ signal: Int32) {
    lock.withLock { if ended == nil { _ = kill(leadsGroup ? -pid : pid, signal) } }
  }

  /// Waits for the child to end and says how it ended.
  @discardableResult
  public func waitUntilExit() -> Termination {
    while true {
      if let ended = poll() { return ended }
      usleep(5_000)
    }
  }

  /// Waits for the child to end without holding a thread: a test's task polls every 5 ms and sleeps
  /// between, so the few threads of Swift's cooperative pool stay free for the tests beside it (on
  /// two cores a blocked pool thread is half the pool). A cancelled task (a test past its time
  /// limit) kills the child first: a child that never ends must not hold the test run forever.
  @discardableResult
  public func exit() async -> Termination {
    while true {
      if let ended = poll() { return ended }
      guard (try? await Task.sleep(for: .milliseconds(5))) != nil else {
        send(SIGKILL)
        return waitUntilExit()
      }
    }
  }

  /// The child's end if it has ended, reaping it once.
  private func poll() -> Termination? {
    lock.withLock {
      if let ended { return ended }
      var status: Int32 = 0
      var reaped = waitpid(pid, &status, WNOHANG)
      while reaped == -1 && errno == EINTR { reaped = waitpid(pid, &status, WNOHANG) }
      guard reaped == pid else { return nil }
      let signal = status & 0x7f
      ended = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
      return ended
    }
  }

  deinit {
    if lock.withLock({ ended == nil }) {
      kill(leadsGroup ? -pid : pid, SIGKILL)
      waitUntilExit()
    }
  }
}

extension FileHandle {
  /// Reads to the end of the file (a child's output: until it closes it) on a thread of its own, so
  /// that the test's task holds none of the cooperative pool's threads while the child runs.
  public func readToEndOffThePool() async -> Data {
    await offThePool { self.readDataToEndOfFile() }
  }
}

/// Runs `body` on a thread of its own and returns its result: for a blocking read or wait that
/// must not hold a thread of Swift's cooperative pool.
public func offThePool<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
  await withCheckedContinuation { continuation in
    Thread.detachNewThread { continuation.resume(returning: body()) }
  }
}

/// A child process that could not be started.
public enum ChildProcessError: Error, CustomStringConvertible {
  /// `posix_spawn` refused `executable` with this error number.
  case couldNotStart(String, errno: Int32)

  public var description: String {
    switch self {
    case .couldNotStart(let executable, let code): "could not start \(executable): \(String(cString: strerror(code)))"
    }
  }
}

#if !canImport(Darwin)
  /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module
  /// does not show: looked up once by name.
  private let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
      fatalError("glibc 2.34 or later is needed: posix_spawn_file_actions_addclosefrom_np is missing")
    }
    return unsafeBitCast(
      symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
  }()
#endif

/// Runs `body` with `strings` as a `NULL`-terminated C array, freed after.
private func withCStrings<Result>(
  _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result
) -> Result {
  let pointers = strings.map { strdup($0) } + [nil]
  defer { for pointer in pointers { free(pointer) } }
  return body(pointers)
}
